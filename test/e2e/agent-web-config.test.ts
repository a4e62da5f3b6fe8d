// The agent behind the exporter-toolkit web config (--web.config.file): a real Prometheus scrapes it over
// TLS with basic auth, and the same Prometheus fails to scrape it without credentials, with a wrong
// password, without trusting its CA, and over plain HTTP. Certificates are made here with openssl
// (node:crypto cannot issue X.509); the kube-proxy it reads is the STAND-IN.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import t, { type Test } from "tap";
import { spawnOwned, stopOwned } from "../helpers/children.js";
import { startPrometheus } from "../helpers/prometheus.js";
import { AGENT_CLI, startStandin } from "../helpers/standin.js";
import { agentBuilt, startAgent } from "./agent-process.js";

const OPENSSL = "/usr/bin/openssl";

function openssl(dir: string, args: string[]) {
  const r = spawnSync(OPENSSL, args, { cwd: dir, encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) throw new Error(`openssl ${args.join(" ")}: ${r.stderr}`);
}

/** A CA and a server certificate for 127.0.0.1 signed by it, in `dir`. */
function makeCerts(dir: string) {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(dir, [
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "2",
    "-subj",
    "/CN=proxyscope test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign",
  ]);
  openssl(dir, [
    "req",
    ...ec,
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
    "-subj",
    "/CN=proxyscope-agent",
  ]);
  writeFileSync(join(dir, "san.cnf"), "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.crt",
    "-days",
    "2",
    "-extfile",
    "san.cnf",
  ]);
  // A second CA Prometheus may be told to trust instead: the agent's certificate must not pass with it.
  openssl(dir, [
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "other.key",
    "-out",
    "other.crt",
    "-days",
    "2",
    "-subj",
    "/CN=other CA",
  ]);
}

function httpsGet(url: string, ca: Buffer, auth?: string) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
    (resolve, reject) => {
      const req = request(
        url,
        { ca, headers: auth ? { authorization: auth } : {}, timeout: 60_000 },
        (res) => {
          let body = "";
          res.setEncoding("utf8").on("data", (d: string) => (body += d));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", reject);
      req.end();
    },
  );
}

t.test(
  "Prometheus scrapes the agent over TLS with basic auth, and is refused without them",
  { skip: !agentBuilt() && "run npx tsc -p . first" },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "proxyscope-webcfg-e2e-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    makeCerts(dir);
    const password = randomBytes(12).toString("hex");
    writeFileSync(
      join(dir, "web-config.yml"),
      [
        "# node_exporter's format: paths relative to this file",
        "tls_server_config:",
        "  cert_file: server.crt",
        "  key_file: server.key",
        "http_server_config:",
        "  headers:",
        "    Strict-Transport-Security: max-age=31536000",
        "basic_auth_users:",
        `  prometheus: ${bcrypt.hashSync(password, 10).replace(/^\$2[ab]\$/, "$2y$")}`,
        "",
      ].join("\n"),
    );
    const ca = readFileSync(join(dir, "ca.crt"));

    const kp = await startStandin({ mode: "nftables", version: "v1.37.1" });
    t.teardown(() => kp.stop());
    const agent = await startAgent({
      args: [
        "--web.config.file",
        join(dir, "web-config.yml"),
        "--scan-interval-s",
        "2",
        "--kube-proxy-metrics-url",
        kp.metricsUrl,
        "--kube-proxy-health-url",
        kp.healthUrl,
      ],
    });
    t.teardown(() => agent.stop());
    await agent.scans(1);
    const base = `https://127.0.0.1:${agent.port}`;
    const auth = `Basic ${Buffer.from(`prometheus:${password}`).toString("base64")}`;

    // Straight from a TLS client first: the kubelet's probes stay open, everything else needs the password.
    t.equal((await httpsGet(`${base}/healthz`, ca)).status, 200, "/healthz open (kubelet probes)");
    const noAuth = await httpsGet(`${base}/metrics`, ca);
    t.equal(noAuth.status, 401, "/metrics without credentials");
    t.match(String(noAuth.headers["www-authenticate"]), /^Basic /);
    const withAuth = await httpsGet(`${base}/metrics`, ca, auth);
    t.equal(withAuth.status, 200);
    t.match(withAuth.body, /^proxyscope_node_phase\{phase="nftables"\} 1$/m);
    t.equal(withAuth.headers["strict-transport-security"], "max-age=31536000", "http_server_config header");
    t.equal((await httpsGet(`${base}/report`, ca, auth)).status, 200, "detail for an authenticated client");
    await t.rejects(
      httpsGet(`${base}/healthz`, readFileSync(join(dir, "other.crt"))),
      /self-signed|unable to verify|certificate/i,
      "a client trusting another CA refuses the agent",
    );

    // A client that connects and never sends a ClientHello is closed at the 10 s handshake deadline,
    // not held for Node's default 120 s: told apart by a wide margin.
    const silent = net.connect(agent.port, "127.0.0.1");
    silent.on("error", () => undefined);
    silent.resume();
    t.teardown(() => silent.destroy());
    const outcome = await Promise.race([
      new Promise<string>((res) => silent.once("close", () => res("closed by the agent"))),
      new Promise<string>((res) => setTimeout(() => res("still open after 60 s"), 60_000).unref()),
    ]);
    t.equal(outcome, "closed by the agent", "a TLS connection without a handshake is not held");

    const target = `127.0.0.1:${agent.port}`;
    const prom = await startPrometheus({
      jobs: [
        {
          job: "tls-basic-auth",
          targets: [target],
          tlsCaFile: join(dir, "ca.crt"),
          basicAuth: { username: "prometheus", password },
        },
        { job: "tls-no-auth", targets: [target], tlsCaFile: join(dir, "ca.crt") },
        {
          job: "tls-wrong-password",
          targets: [target],
          tlsCaFile: join(dir, "ca.crt"),
          basicAuth: { username: "prometheus", password: "not-it" },
        },
        {
          job: "tls-other-ca",
          targets: [target],
          tlsCaFile: join(dir, "other.crt"),
          basicAuth: { username: "prometheus", password },
        },
        { job: "plain-http", targets: [target], basicAuth: { username: "prometheus", password } },
      ],
    });
    t.teardown(() => prom.stop());

    await prom.waitFor('up{job="tls-basic-auth"}', (s) => s[0]?.value === 1, 120_000);
    const phase = await prom.waitFor(
      'proxyscope_node_phase{job="tls-basic-auth"} == 1',
      (s) => s.length === 1,
    );
    t.equal(phase[0]!.metric.phase, "nftables", "scraped over TLS with basic auth");
    // Each refused job is down for the reason it should be. The first scrape of a new password can run
    // past the 1 s scrape timeout on a loaded machine while bcrypt works (its verdict is then remembered),
    // so wait for the reason to show rather than judging the first scrape.
    const lastError = async (job: string) => {
      const r = (await (await fetch(`${prom.url}/api/v1/targets`)).json()) as {
        data: { activeTargets: { scrapePool: string; lastError: string; health: string }[] };
      };
      return r.data.activeTargets.find((x) => x.scrapePool === job)?.lastError ?? "";
    };
    const refused: [string, RegExp][] = [
      ["tls-no-auth", /401/],
      ["tls-wrong-password", /401/],
      ["tls-other-ca", /certificate|x509/i],
      ["plain-http", /.+/],
    ];
    for (const [job, why] of refused) {
      let last = "";
      for (let i = 0; i < 480 && !why.test(last); i++) {
        last = await lastError(job);
        if (!why.test(last)) await new Promise((r) => setTimeout(r, 250));
      }
      t.match(last, why, `${job}: scrape refused (${last})`);
      const up = await prom.query(`up{job="${job}"}`);
      t.equal(up[0]?.value, 0, `${job}: up 0`);
      t.equal((await prom.query(`proxyscope_node_phase{job="${job}"}`)).length, 0, `${job}: no agent series`);
    }
  },
);

/** Runs `serve` with a web config that must stop it: its exit code and stderr, or "still running". */
function serveMustStop(t: Test, webConfig: string) {
  return new Promise<{ code: number | null; stderr: string } | "still running">((resolve) => {
    const child = spawnOwned(
      process.execPath,
      [
        AGENT_CLI,
        "serve",
        "--listen",
        "127.0.0.1",
        "--port",
        "0",
        "--node",
        "e2e-node",
        "--web.config.file",
        webConfig,
      ],
      { owner: t, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    // A start that waits on a FIFO or reads /dev/zero runs until killed: far past this, not a close call.
    const timer = setTimeout(() => {
      resolve("still running");
      void stopOwned(child);
    }, 120_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

t.test(
  "a web config that cannot protect the port stops the agent: exit 2, a named error, no stack",
  { skip: !agentBuilt() && "run npx tsc -p . first" },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "proxyscope-webcfg-e2e-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    makeCerts(dir);
    const fifo = join(dir, "fifo");
    spawnSync("/usr/bin/mkfifo", [fifo]);
    t.teardown(() => {
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // no reader waiting on it
      }
    });
    const cases: [string, string, RegExp][] = [
      [
        "a key that is not the certificate's",
        "tls_server_config:\n  cert_file: server.crt\n  key_file: other.key\n",
        /key_file other\.key is not the key of cert_file server\.crt/,
      ],
      ["an empty file", "", /configures nothing/],
      ["no users", "basic_auth_users: {}\n", /basic_auth_users is empty/],
      [
        "/dev/zero as the certificate",
        "tls_server_config:\n  cert_file: /dev/zero\n  key_file: server.key\n",
        /cert_file \/dev\/zero: not a regular file/,
      ],
      [
        "a FIFO as the key",
        `tls_server_config:\n  cert_file: server.crt\n  key_file: ${fifo}\n`,
        /key_file .*fifo: not a regular file/,
      ],
    ];
    for (const [name, text, why] of cases) {
      const file = join(dir, "web.yml");
      writeFileSync(file, text);
      const r = await serveMustStop(t, file);
      if (r === "still running") {
        t.fail(`${name}: the agent was still starting after 120 s`);
        continue;
      }
      t.equal(r.code, 2, `${name}: exit 2 (config error), not 3 (a bug)`);
      t.match(r.stderr, /^proxyscope-agent: web config .*web\.yml: /, `${name}: names the file`);
      t.match(r.stderr, why, `${name}: names the problem`);
      t.notMatch(r.stderr, /\n\s+at /, `${name}: no stack`);
    }
    // The config itself a FIFO or /dev/zero: refused before a byte is read.
    for (const file of [fifo, "/dev/zero"]) {
      const r = await serveMustStop(t, file);
      t.match(r, { code: 2, stderr: /not a regular file/ }, `${file} as the web config`);
    }
  },
);

t.test(
  "basic auth over plain HTTP starts, and the log names the risk",
  { skip: !agentBuilt() && "run npx tsc -p . first" },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "proxyscope-webcfg-e2e-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "web.yml"), `basic_auth_users:\n  prometheus: ${bcrypt.hashSync("pw", 4)}\n`);
    const agent = await startAgent({ args: ["--web.config.file", join(dir, "web.yml")] });
    t.teardown(() => agent.stop());
    const warn = agent.logs().filter((l) => l.level === 40);
    t.match(
      warn.map((l) => l.msg),
      [/basic auth over plain HTTP: passwords cross the network in clear text/],
      "one warning, naming the risk",
    );
    t.equal((await agent.get("/metrics")).status, 401, "and the users are still asked for");
  },
);
