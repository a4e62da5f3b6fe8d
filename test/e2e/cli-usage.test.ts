// Bounded inputs, through the built CLIs: usage errors exit 2 with one clear line (not "internal error"
// and a stack), and in static mode --fail-on unanswered passes when every agent answered — the API
// the user chose not to ask is not an unanswered read. Agents are loopback stand-ins serving reports
// the agent's own builder made.
import t, { type Test } from "tap";
import { createServer } from "node:net";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "../helpers/uml.js";
import { AGENT_CLI } from "../helpers/standin.js";
import { freePort } from "../helpers/prometheus.js";
import {
  agentPod,
  blackHoleReport,
  collector,
  node,
  run,
  startAgent,
  startApiServer,
  writeKubeconfig,
} from "./collector-fleet.js";
import { emptyFacts, noKernelState } from "../helpers/facts.js";

const facts = emptyFacts({
  ...noKernelState,
  kernel: { release: "6.8.0-1015-aws", major: 6, minor: 8, patch: 0 },
  proxyMode: { mode: "nftables" },
});

t.test("static --fail-on unanswered: 0 when every agent answered, 1 when one did not", async (t) => {
  const port = await freePort();
  const stopA = await startAgent("127.0.0.1", port, { report: blackHoleReport("node-a", facts) });
  t.teardown(stopA);
  const args = ["report", "--source", "static", "--output", "json", "--fail-on", "unanswered"];
  const ok = await collector([...args, "--agents", `http://127.0.0.1:${port}`]);
  t.equal(ok.code, 0, ok.stderr);
  t.match(JSON.parse(ok.stdout).cluster.gaps, [{ what: "Kubernetes API", reason: /not asked/ }]);
  const deadPort = await freePort();
  const bad = await collector([
    ...args,
    "--timeout-ms",
    "5000",
    "--agents",
    `http://127.0.0.1:${port}`,
    `http://127.0.0.1:${deadPort}`,
  ]);
  t.equal(bad.code, 1, bad.stderr);
  t.match(bad.stderr, /--fail-on unanswered: 1 reached it \(http:\/\/127\.0\.0\.1:\d+: unreachable\)/);
});

t.test("usage errors: exit 2, one line naming the flag, no stack", async (t) => {
  const cases: [string[], RegExp][] = [
    [
      [AGENT_CLI, "serve", "--listen", "256.1.1.1", "--port", "0"],
      /^proxyscope-agent: invalid --listen: must be an IP address or a host name \(see --help\)\n$/,
    ],
    [
      [AGENT_CLI, "scan", "--call-timeout-ms", "9999999999"],
      /^proxyscope-agent: invalid --call-timeout-ms: must be from 1 to 2147483647 \(ms\)/,
    ],
    [[AGENT_CLI, "serve", "--port", "0x50"], /^proxyscope-agent: invalid --port: must be decimal digits/],
    [[AGENT_CLI, "scan", "extra"], /^proxyscope-agent: Unexpected argument 'extra'/],
  ];
  for (const [argv, msg] of cases) {
    const r = await run(process.execPath, argv);
    t.equal(r.code, 2, argv.slice(1).join(" "));
    t.match(r.stderr, msg);
    t.notMatch(r.stderr, /internal error|\n\s+at /);
  }
  for (const [argv, msg] of [
    [["serve", "--listen", "256.1.1.1", "--port", "0"], /^proxyscope: invalid --listen: /],
    [["serve", "--interval-s", "3000000"], /^proxyscope: invalid --interval-s: .*2147483 \(s\)/],
    // Each command takes its own flags: another command's flag is named as such.
    [["report", "--interval-s", "300"], /^proxyscope: Unknown option '--interval-s' \(a flag of serve\)/],
    [["report", "--source", "static", "stray"], /^proxyscope: unexpected argument\(s\) "stray"/],
  ] as [string[], RegExp][]) {
    const r = await collector(argv);
    t.equal(r.code, 2, argv.join(" "));
    t.match(r.stderr, msg);
    t.notMatch(r.stderr, /internal error|\n\s+at /);
  }
});

t.test(
  "the collector runs as a kubectl plugin: an executable named kubectl-proxyscope on PATH",
  async (t) => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
      bin: Record<string, string>;
    };
    t.equal(
      pkg.bin["kubectl-proxyscope"],
      pkg.bin.proxyscope,
      "npm installs the collector under the plugin's name",
    );
    // kubectl finds plugins as kubectl-<name> on PATH and execs them with the remaining arguments.
    const dir = mkdtempSync(join(tmpdir(), "proxyscope-plugin-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    symlinkSync(join(REPO_ROOT, pkg.bin["kubectl-proxyscope"]!), join(dir, "kubectl-proxyscope"));
    const r = spawnSync("kubectl-proxyscope", ["version"], {
      encoding: "utf8",
      timeout: 120_000,
      env: { PATH: `${dir}:${dirname(process.execPath)}` },
    });
    t.equal(r.status, 0, r.stderr);
    t.match(r.stdout, /^proxyscope \d+\.\d+\.\d+/);
    const help = spawnSync("kubectl-proxyscope", ["--help"], {
      encoding: "utf8",
      timeout: 120_000,
      env: { PATH: `${dir}:${dirname(process.execPath)}` },
    });
    t.match(`${help.stdout}${help.stderr}`, /kubectl proxyscope <command>/);
  },
);

const noStack = (t: Test, r: { stderr: string }, what: string) => {
  t.notMatch(r.stderr, /internal error|\n\s+at /, `${what}: no stack`);
  t.equal(r.stderr.trim().split("\n").length, 1, `${what}: one line`);
};

t.test("usage errors found only at run time: exit 2, one named line, no stack", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-usage-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A port already taken, by a listener this test holds.
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
  t.teardown(() => taken.close());
  const busy = String((taken.address() as { port: number }).port);
  const secretFile = join(dir, "agents.txt");
  writeFileSync(secretFile, "http://127.0.0.1:1\nsuper-secret-value not a url\n");
  const agentCases: [string[], RegExp][] = [
    // RFC 6761: .invalid never resolves.
    [
      ["serve", "--listen", "no-such-host.invalid", "--port", "0"],
      /^proxyscope-agent: cannot listen on --listen no-such-host\.invalid --port 0: /,
    ],
    // RFC 5737 TEST-NET-1: on no interface of this machine.
    [
      ["serve", "--listen", "192.0.2.1", "--port", "0"],
      /^proxyscope-agent: cannot listen on --listen 192\.0\.2\.1 --port 0: address not available on this machine/,
    ],
    [
      ["serve", "--listen", "127.0.0.1", "--port", busy],
      /^proxyscope-agent: cannot listen on --listen 127\.0\.0\.1 --port \d+: port in use/,
    ],
    [["scan", "--node", "a\nb"], /^proxyscope-agent: invalid --node: must not hold control characters/],
    [["scan", "--node", "a\u009b2J"], /^proxyscope-agent: invalid --node: must not hold control characters/],
    [["scan", "--host-root", "/nonexistent"], /^proxyscope-agent: invalid --host-root: not a directory/],
    [
      ["serve", "--scan-interval-s", "1.5"],
      /^proxyscope-agent: invalid --scan-interval-s: must be decimal digits/,
    ],
    [
      ["serve", "--full-read-interval-s", "0.5"],
      /^proxyscope-agent: invalid --full-read-interval-s: must be decimal digits/,
    ],
    [
      ["verify", "--sync-window-s", "2.5"],
      /^proxyscope-agent: invalid --sync-window-s: must be decimal digits/,
    ],
    [
      ["scan", "--parity-max-age-s", "1e3"],
      /^proxyscope-agent: invalid --parity-max-age-s: must be decimal digits/,
    ],
    [
      ["scan", "--kube-proxy-metrics-url", "http://user:s3cret@127.0.0.1:10249"],
      /^proxyscope-agent: invalid --kube-proxy-metrics-url: must hold no user name or password/,
    ],
  ];
  for (const [argv, msg] of agentCases) {
    const r = await run(process.execPath, [AGENT_CLI, ...argv, "--tool-dir", dir]);
    const what = JSON.stringify(argv);
    t.equal(r.code, 2, `${what}: ${r.stderr}`);
    t.match(r.stderr, msg, what);
    t.notMatch(r.stderr, /s3cret/, what);
    noStack(t, r, what);
  }
  const collectorCases: [string[], RegExp][] = [
    [
      ["serve", "--listen", "no-such-host.invalid", "--port", "0"],
      /^proxyscope: cannot listen on --listen no-such-host\.invalid --port 0: /,
    ],
    [
      ["serve", "--listen", "127.0.0.1", "--port", busy],
      /^proxyscope: cannot listen on --listen 127\.0\.0\.1 --port \d+: port in use/,
    ],
    [["serve", "--interval-s", "1.5"], /^proxyscope: invalid --interval-s: must be decimal digits/],
    [
      ["report", "--source", "static", "--agents", "notaurl"],
      /^proxyscope: invalid --agents: value 1 is not URL or NODE=URL/,
    ],
    [
      ["verify", "--node", "n1", "--agents", "n1=ftp://x"],
      /^proxyscope: invalid --agents: value 1 is not URL or NODE=URL/,
    ],
    [
      ["report", "--source", "static", "--agents", "http://user:s3cret@127.0.0.1:1"],
      /^proxyscope: invalid --agents: value 1: holds a user name or password/,
    ],
    [
      ["report", "--source", "static", "--agents-file", dir],
      /^proxyscope: cannot read --agents-file .*: not a regular file/,
    ],
    [
      ["report", "--source", "static", "--agents-file", "/dev/zero"],
      /^proxyscope: cannot read --agents-file .*: not a regular file/,
    ],
    // The file's lines are not quoted: it may be a secret pointed at by mistake.
    [["report", "--source", "static", "--agents-file", secretFile], /^proxyscope: --agents-file line 2: /],
    [
      ["verify", "--node", "a\u001b]0;x\u0007"],
      /^proxyscope: invalid --node: must not hold control characters/,
    ],
  ];
  for (const [argv, msg] of collectorCases) {
    const r = await collector(argv);
    const what = JSON.stringify(argv);
    t.equal(r.code, 2, `${what}: ${r.stderr}`);
    t.match(r.stderr, msg, what);
    t.notMatch(r.stderr, /s3cret|super-secret/, what);
    noStack(t, r, what);
  }
});

t.test("a kubeconfig server's password is in no error", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-kc-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const kc = writeKubeconfig(dir, `http://admin:s3cret@127.0.0.1:${port}`, "stand-in-token");
  for (const cmd of [
    ["report"],
    ["verify", "--node", "n1"],
    ["lc-audit", "--service", "default/kubernetes"],
    ["scan-node", "n1"],
  ]) {
    const r = await collector([...cmd, "--kubeconfig", kc, "--timeout-ms", "30000"]);
    t.equal(r.code, 5, `${cmd.join(" ")}: ${r.stderr}`);
    t.match(r.stderr, /http:\/\/\*\*\*@127\.0\.0\.1/, cmd.join(" "));
    t.notMatch(r.stderr + r.stdout, /s3cret/, cmd.join(" "));
  }
});

t.test("verify: what the API server says reaches the terminal escaped", async (t) => {
  // An agent pod whose name carries a terminal escape; the API server's 403 on pods/proxy quotes it.
  const evil = "agent-\u001b]0;pwned\u0007\u009b2J";
  const api = await startApiServer({
    nodes: [node({ name: "n1", kernel: "6.8.0", osImage: "Ubuntu 24.04" })],
    pods: [
      {
        ...(agentPod("n1", "198.51.100.11", 0) as object),
        metadata: {
          name: evil,
          namespace: "proxyscope",
          labels: { "app.kubernetes.io/name": "proxyscope-agent" },
        },
      },
    ],
    forbidden: ["pods/proxy"],
  });
  t.teardown(api.stop);
  const r = await collector(
    ["verify", "--node", "n1", "--kubeconfig", api.kubeconfig, "--timeout-ms", "30000"],
    {
      PROXYSCOPE_AGENT_ACCESS: "proxy",
    },
  );
  t.equal(r.code, 5, r.stderr);
  t.match(r.stderr, /forbidden/);
  t.match(r.stderr, /agent-\\u001b\]0;pwned\\u0007\\u009b2J/, "shown escaped");
  // eslint-disable-next-line no-control-regex
  t.notMatch(r.stderr, /[\u001b\u0007\u009b]/, "no raw control character");
});
