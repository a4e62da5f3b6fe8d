// The exporter-toolkit web configuration: what node_exporter accepts parses, the toolkit's own sample
// shape included; what the agent cannot honour is refused by name; and the access rules on the routes
// (probes open, authentication everywhere else when configured, detail for loopback only otherwise).
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import t, { type Test } from "tap";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { renderScan } from "../../../agent/server/rendered-scan.js";
import { DETAIL_ROUTES } from "../../../agent/server/access.js";
import { BasicAuthChecker } from "../../../common/basic-auth.js";
import { isLoopback } from "../../../common/route-access.js";
import { registerVerifyRoute } from "../../../agent/server/verify-route.js";
import { buildApp } from "../../../agent/server/app.js";
import { AgentState } from "../../../agent/server/state.js";
import { ReportSummary } from "../../../agent/server/summary.js";
import {
  loadWebConfig,
  parseWebConfig,
  WebConfigError,
  type WebSecurity,
} from "../../../common/web-config.js";
import { movedWithBlackHole, reportOf } from "../../helpers/reports.js";
import { selfSigned } from "../../helpers/self-signed.js";

const HASH = bcrypt.hashSync("s3cret", 4);

/** `text` is refused with a WebConfigError that names the file and whose words match `want`. */
function refused(t: Test, text: string, want: RegExp) {
  let caught: unknown = null;
  try {
    parseWebConfig(text, "w.yml");
  } catch (e) {
    caught = e;
  }
  t.ok(caught instanceof WebConfigError, `refused: ${JSON.stringify(text)}`);
  const message = String((caught as Error | null)?.message);
  t.match(message, want, JSON.stringify(text));
  t.match(message, /^web config w\.yml: /);
}

t.test("parses the toolkit's documented shape", async (t) => {
  // The shape of exporter-toolkit docs/web-config.yml (TLS files, bcrypt users with $2y$) plus headers.
  const cfg = parseWebConfig(
    [
      "tls_server_config:",
      "  cert_file: server.crt",
      "  key_file: server.key",
      "  client_auth_type: RequireAndVerifyClientCert",
      "  client_ca_file: ca.crt",
      "  min_version: TLS13",
      "http_server_config:",
      "  headers:",
      "    X-Frame-Options: deny",
      "    Strict-Transport-Security: max-age=31536000",
      "basic_auth_users:",
      `  alice: ${HASH.replace("$2a$", "$2y$")}`,
    ].join("\n"),
    "w.yml",
  );
  t.equal(cfg.tls_server_config?.client_auth_type, "RequireAndVerifyClientCert");
  t.equal(cfg.tls_server_config?.max_version, "TLS13", "default max");
  t.same(Object.keys(cfg.basic_auth_users ?? {}), ["alice"]);
});

// The toolkit serves plain HTTP for a file that configures nothing (web/tls_config.go, Serve: "TLS is
// disabled."); a file given to protect the port that protects nothing is a mistake (an empty Secret key, a
// template that rendered nothing), so it is refused by name instead.
t.test("a config that configures nothing is refused by name", async (t) => {
  const nothing: [string, RegExp][] = [
    ["", /configures nothing/],
    ["# only a comment\n", /configures nothing/],
    ["{}\n", /configures nothing/],
    ["http_server_config:\n  http2: false\n", /configures nothing/],
    ["http_server_config:\n  headers: {}\n", /configures nothing/],
    ["basic_auth_users: {}\n", /basic_auth_users is empty/],
    [
      "tls_server_config:\n  cert_file: a\n  key_file: k\nbasic_auth_users: {}\n",
      /basic_auth_users is empty/,
    ],
  ];
  for (const [text, want] of nothing) refused(t, text, want);
});

t.test("refuses, by name, what it cannot honour or what is wrong", async (t) => {
  const bad: [string, RegExp][] = [
    ["tls_server_config:\n  cert_file: a\n", /key_file \(or key\) is required/],
    ["tls_server_config:\n  cert_file: a\n  cert: b\n  key_file: k\n", /cert or cert_file, not both/],
    [
      "tls_server_config:\n  cert_file: a\n  key_file: k\n  client_auth_type: RequireAndVerifyClientCert\n",
      /needs client_ca_file/,
    ],
    ["tls_server_config:\n  cert_file: a\n  key_file: k\n  client_ca_file: c\n", /does not verify client/],
    ["tls_server_config:\n  cert_file: a\n  key_file: k\n  client_auth_type: Maybe\n", /client_auth_type/],
    [
      "tls_server_config:\n  cert_file: a\n  key_file: k\n  min_version: TLS13\n  max_version: TLS12\n",
      /above/,
    ],
    [
      "tls_server_config:\n  cert_file: a\n  key_file: k\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
      /cipher_suites: not supported/,
    ],
    [
      "tls_server_config:\n  cert_file: a\n  key_file: k\n  client_allowed_sans: [x]\n",
      /client_allowed_sans: not supported/,
    ],
    ["rate_limit:\n  interval: 1s\n  burst: 2\n", /rate_limit: not supported/],
    ["basic_auth_users:\n  alice: plaintext-password\n", /bcrypt hash/],
    ["basic_auth_users:\n  'a:b': " + HASH + "\n", /basic_auth_users\.a:b: /],
    ["tls_config:\n  cert_file: a\n", /tls_config/],
    ["http_server_config:\n  headers:\n    X-Frame-Options: allow-all\n", /deny or sameorigin/],
    ["http_server_config:\n  headers:\n    Set-Cookie: a\n", /Set-Cookie/],
    ["- a list\n", /expected object/i],
    ["key: [unclosed\n", /not YAML/],
  ];
  for (const [text, want] of bad) refused(t, text, want);
});

t.test("files are read relative to the config file; a missing one is a named failure", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-webcfg-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  selfSigned(dir, "tls");
  writeFileSync(join(dir, "web.yml"), "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n");
  const s = await loadWebConfig(join(dir, "web.yml"));
  t.equal(s.tls?.cert.toString(), readFileSync(join(dir, "tls.crt"), "utf8"));
  t.equal(s.tls?.minVersion, "TLSv1.2", "the toolkit's default minimum, TLS 1.2");
  writeFileSync(join(dir, "web2.yml"), "tls_server_config:\n  cert_file: nope.crt\n  key_file: tls.key\n");
  await t.rejects(loadWebConfig(join(dir, "web2.yml")), /cert_file .*nope\.crt: ENOENT/);
  await t.rejects(loadWebConfig(join(dir, "absent.yml")), /absent\.yml: ENOENT/);
});

t.test(
  "the config and the files it names are regular files, capped: no FIFO hang, no /dev/zero",
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "proxyscope-webcfg-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const fifo = join(dir, "fifo.yml");
    execFileSync("/usr/bin/mkfifo", [fifo]);
    t.teardown(() => {
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // nobody is blocked reading it: the fix holds
      }
    });
    await t.rejects(
      loadWebConfig(fifo),
      /web config .*fifo\.yml: .*not a regular file/,
      "a FIFO as the config",
    );
    await t.rejects(loadWebConfig("/dev/zero"), /web config \/dev\/zero: .*not a regular file/, "/dev/zero");
    writeFileSync(join(dir, "tls.key"), "KEY");
    for (const [field, path] of [
      ["cert_file", "/dev/zero"],
      ["cert_file", fifo],
      ["cert_file", dir],
    ] as const) {
      writeFileSync(join(dir, "web.yml"), `tls_server_config:\n  ${field}: ${path}\n  key_file: tls.key\n`);
      await t.rejects(
        loadWebConfig(join(dir, "web.yml")),
        new RegExp(`${field} ${path}: not a regular file`),
      );
    }
    writeFileSync(join(dir, "big.yml"), `# ${"x".repeat(1024 * 1024)}\n`);
    await t.rejects(loadWebConfig(join(dir, "big.yml")), /big\.yml: larger than 1048576 bytes/);
  },
);

t.test(
  "TLS material is checked before listening: a key not the certificate's is a named error",
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "proxyscope-webcfg-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    selfSigned(dir, "a");
    selfSigned(dir, "b");
    const cfg = (cert: string, key: string, extra = "") => {
      writeFileSync(
        join(dir, "web.yml"),
        `tls_server_config:\n  cert_file: ${cert}\n  key_file: ${key}\n${extra}`,
      );
      return loadWebConfig(join(dir, "web.yml"));
    };
    const ok = await cfg("a.crt", "a.key");
    t.match(ok.tls?.cert.toString(), /BEGIN CERTIFICATE/);
    t.same(ok.warnings, [], "TLS without basic auth: the toolkit's usual setup, nothing to warn about");
    await t.rejects(
      cfg("a.crt", "b.key"),
      /web config .*web\.yml: key_file b\.key is not the key of cert_file a\.crt/,
    );
    writeFileSync(join(dir, "junk.crt"), "not a certificate\n");
    await t.rejects(cfg("junk.crt", "a.key"), /web config .*: cert_file junk\.crt: not a PEM certificate/);
    await t.rejects(cfg("a.crt", "junk.crt"), /web config .*: key_file junk\.crt: not a PEM private key/);
    await t.rejects(
      cfg("a.crt", "a.key", "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: junk.crt\n"),
      /web config .*: client_ca_file junk\.crt: not a PEM certificate/,
    );
    for (const e of await Promise.allSettled([cfg("a.crt", "b.key")]))
      if (e.status === "rejected")
        t.ok(e.reason instanceof WebConfigError, "a WebConfigError: exit 2, no stack");
  },
);

t.test("what starts but leaves the port open says so: warnings naming the risk", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-webcfg-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "users.yml"), `basic_auth_users:\n  alice: ${HASH}\n`);
  const users = await loadWebConfig(join(dir, "users.yml"));
  t.equal(users.warnings.length, 1);
  t.match(users.warnings[0], /basic auth over plain HTTP: .*clear text/);
  writeFileSync(join(dir, "headers.yml"), "http_server_config:\n  headers:\n    X-Frame-Options: deny\n");
  const headers = await loadWebConfig(join(dir, "headers.yml"));
  t.equal(headers.warnings.length, 1);
  t.match(headers.warnings[0], /no TLS and no authentication: plain HTTP/);
});

// No timings are asserted: the cost chosen, the comparisons counted and the refusals are.
t.test("basic auth: an unknown user costs what the dearest known user costs", async (t) => {
  const cheap = bcrypt.hashSync("a", 4);
  const dear = bcrypt.hashSync("b", 6).replace(/^\$2b\$/, "$2y$");
  const c = new BasicAuthChecker(
    new Map([
      ["cheap", cheap],
      ["dear", dear],
    ]),
  );
  t.equal(c.dummyCost, 6, "the highest cost among the users");
  t.equal(bcrypt.getRounds(await c.dummyHash()), 6, "the dummy hash is made at that cost");
  t.equal(await c.check("mallory", "b"), false, "unknown user");
  t.equal(c.bcryptRuns, 1, "an unknown user runs bcrypt as a known one does");
  t.equal(new BasicAuthChecker(new Map([["x", bcrypt.hashSync("x", 5)]])).dummyCost, 5);
});

t.test("basic auth: good credentials are verified once, then remembered", async (t) => {
  const c = new BasicAuthChecker(new Map([["alice", HASH]]));
  t.equal(await c.check("alice", "s3cret"), true);
  t.equal(c.bcryptRuns, 1);
  for (let i = 0; i < 5; i++) t.equal(await c.check("alice", "s3cret"), true);
  t.equal(c.bcryptRuns, 1, "bcrypt not run again for the same good credentials");
  // A flood of distinct wrong passwords cannot push the good credentials out.
  const flood = new BasicAuthChecker(new Map([["alice", HASH]]), { now: () => 0, budgetMs: 1e12 });
  t.equal(await flood.check("alice", "s3cret"), true);
  for (let i = 0; i < 300; i++) await flood.check("alice", `wrong-${i}`);
  const runs = flood.bcryptRuns;
  t.equal(await flood.check("alice", "s3cret"), true);
  t.equal(flood.bcryptRuns, runs, "still remembered after 300 wrong passwords");
  t.equal(await flood.check("alice", "wrong-299"), false);
  t.equal(flood.bcryptRuns, runs, "a repeated wrong password is remembered too");
});

t.test("basic auth: the same credentials at once share one comparison, not a 429", async (t) => {
  // Prometheus's first scrape and a second client (or a retry) with the same good credentials arrive
  // together: the second waits for the comparison already running for exactly them.
  const c = new BasicAuthChecker(new Map([["alice", HASH]]));
  const both = await Promise.all([c.check("alice", "s3cret"), c.check("alice", "s3cret")]);
  t.same(both, [true, true]);
  t.equal(c.bcryptRuns, 1, "one comparison for both");
  const wrong = await Promise.all([c.check("alice", "nope"), c.check("alice", "nope")]);
  t.same(wrong, [false, false], "a wrong password shared too: no extra comparison for an attacker");
  t.equal(c.bcryptRuns, 2);
  const other = c.check("alice", "other-1");
  t.equal(await c.check("alice", "other-2"), "busy", "other credentials are still refused while one runs");
  t.equal(await other, false);
});

t.test("basic auth: remembered only for a while", async (t) => {
  let clock = 0;
  const c = new BasicAuthChecker(new Map([["alice", HASH]]), { now: () => clock });
  t.equal(await c.check("alice", "s3cret"), true);
  clock += 4 * 60_000;
  t.equal(await c.check("alice", "s3cret"), true);
  t.equal(c.bcryptRuns, 1, "within the time");
  clock += 2 * 60_000;
  t.equal(await c.check("alice", "s3cret"), true);
  t.equal(c.bcryptRuns, 2, "verified again after it");
});

t.test("basic auth: one bcrypt at a time, and a bounded share of a core", async (t) => {
  let clock = 0;
  const c = new BasicAuthChecker(new Map([["alice", HASH]]), { now: () => clock });
  const first = c.check("alice", "wrong-1");
  t.equal(await c.check("alice", "wrong-2"), "busy", "a second comparison while one runs is refused");
  t.equal(await c.check("mallory", "x"), "busy", "for unknown users too");
  clock += 2_000; // the running comparison is taken to have used 2 s
  t.equal(await first, false);
  t.equal(c.bcryptRuns, 1);
  t.equal(await c.check("alice", "wrong-3"), "busy", "the budget is spent: refused without running bcrypt");
  t.equal(c.bcryptRuns, 1);
  t.ok(c.retryAfterS() >= 1, `retry after ${c.retryAfterS()} s`);
  clock += c.retryAfterS() * 1000;
  t.equal(await c.check("alice", "wrong-3"), false, "allowed again once the budget refills");
  t.equal(c.bcryptRuns, 2);
});

t.test("basic auth: 429 with retry-after when bcrypt is busy", async (t) => {
  let clock = 0;
  const users = new Map([["prom", HASH]]);
  const checker = new BasicAuthChecker(users, { now: () => clock });
  const spent = checker.check("prom", "nope-1");
  clock += 3_000; // that comparison is taken to have used 3 s: the budget is spent
  t.equal(await spent, false);
  const a = await app({ source: "w.yml", tls: null, users, headers: {}, warnings: [] }, "loopback", checker);
  t.teardown(() => a.close());
  const busy = await a.inject({ url: "/metrics", headers: { authorization: basic("prom", "nope-2") } });
  t.equal(busy.statusCode, 429);
  t.equal(busy.headers["retry-after"], String(checker.retryAfterS()));
  t.match(busy.json(), { error: /too many password checks/ });
  t.equal(checker.bcryptRuns, 1, "refused without running bcrypt");
  clock += checker.retryAfterS() * 1000;
  const wrong = await a.inject({ url: "/metrics", headers: { authorization: basic("prom", "nope-2") } });
  t.equal(wrong.statusCode, 401, "checked again once the budget refills");
});

t.test("basic auth: bcrypt verdicts, unknown users, remembered answers", async (t) => {
  const c = new BasicAuthChecker(new Map([["alice", HASH]]));
  t.equal(await c.check("alice", "s3cret"), true);
  t.equal(await c.check("alice", "wrong"), false);
  t.equal(await c.check("mallory", "s3cret"), false, "unknown user");
  t.equal(await c.check("alice", "s3cret"), true, "cached");
  t.ok(
    isLoopback("127.0.0.1") && isLoopback("127.9.9.9") && isLoopback("::1") && isLoopback("::ffff:127.0.0.1"),
  );
  t.notOk(
    isLoopback("10.0.0.1") || isLoopback("::ffff:10.0.0.1") || isLoopback("fe80::1") || isLoopback(undefined),
  );
});

async function app(
  security: WebSecurity | null,
  detailFrom: "loopback" | "any",
  basicAuth?: BasicAuthChecker,
) {
  const state = new AgentState(new AgentMetrics({ version: "0.1.0" }));
  state.record(await renderScan(reportOf(movedWithBlackHole())));
  const a = buildApp(state, {
    retryAfterS: 60,
    lookupVirtualServer: async () => ({ status: "not-found" }),
    access: { security, detailFrom, ...(basicAuth ? { basicAuth } : {}) },
  });
  // Registered as serve does; from loopback it answers 503 (no verify in this test), not 403.
  registerVerifyRoute(a, state, async () => {
    throw new Error("no verify in this test");
  });
  return a;
}
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString("base64")}`;
const REMOTE = "10.1.2.3";
const PUBLIC = ["/metrics", "/report/summary", "/report/schema", "/report/fleet/schema"];
const detailUrl = (r: string) =>
  r === "/ipvs/virtual-server" ? `${r}?protocol=TCP&address=10.96.0.10&port=53` : r;

t.test("no web config: public part open, detail for loopback clients only", async (t) => {
  const a = await app(null, "loopback");
  t.teardown(() => a.close());
  for (const r of ["/healthz", "/readyz", ...PUBLIC])
    t.equal((await a.inject({ url: r, remoteAddress: REMOTE })).statusCode, 200, `${r} from ${REMOTE}`);
  t.same([...DETAIL_ROUTES].sort(), [
    "/ipvs/virtual-server",
    "/parity",
    "/report",
    "/report/fleet",
    "/report/previous",
    "/verify",
  ]);
  for (const r of DETAIL_ROUTES) {
    const res = await a.inject({ url: detailUrl(r), remoteAddress: REMOTE });
    t.equal(res.statusCode, 403, `${r} refused from ${REMOTE}`);
    t.match(res.json(), { error: /loopback clients only/ });
    const head = await a.inject({ method: "HEAD", url: detailUrl(r), remoteAddress: REMOTE });
    t.equal(head.statusCode, 403, `HEAD ${r} refused from ${REMOTE} (Fastify's HEAD route is the GET's)`);
    const local = await a.inject({ url: detailUrl(r), remoteAddress: "127.0.0.1" });
    t.not(local.statusCode, 403, `${r} answered on loopback (${local.statusCode})`);
  }
  const summary = await a.inject({ url: "/report/summary", remoteAddress: REMOTE });
  const s = ReportSummary.strict().parse(summary.json());
  t.equal(s.phase, "nftables");
  t.ok(
    s.findings.some((f) => f.id === "kube-ipvs0-black-hole"),
    "finding ids, no evidence",
  );
  t.notMatch(summary.body, /10\.96\./, "no Service address leaks into the summary");
});

t.test("--detail-from any opens the detail to every client", async (t) => {
  const a = await app(null, "any");
  t.teardown(() => a.close());
  t.equal((await a.inject({ url: "/report", remoteAddress: REMOTE })).statusCode, 200);
});

t.test("basic auth configured: everything but the probes needs it, detail included", async (t) => {
  const a = await app(
    {
      source: "w.yml",
      tls: null,
      users: new Map([["prom", HASH]]),
      headers: { "X-Frame-Options": "deny" },
      warnings: [],
    },
    "loopback",
  );
  t.teardown(() => a.close());
  for (const r of ["/healthz", "/readyz"])
    t.equal((await a.inject({ url: r, remoteAddress: REMOTE })).statusCode, 200, `${r} open for the kubelet`);
  for (const r of [...PUBLIC, ...DETAIL_ROUTES]) {
    for (const remoteAddress of [REMOTE, "127.0.0.1"]) {
      const none = await a.inject({ url: detailUrl(r), remoteAddress });
      t.equal(none.statusCode, 401, `${r} from ${remoteAddress} without credentials`);
      t.match(none.headers["www-authenticate"], /^Basic realm=/);
      const wrong = await a.inject({
        url: detailUrl(r),
        remoteAddress,
        headers: { authorization: basic("prom", "nope") },
      });
      t.equal(wrong.statusCode, 401, `${r} wrong password`);
    }
    const ok = await a.inject({
      url: detailUrl(r),
      remoteAddress: REMOTE,
      headers: { authorization: basic("prom", "s3cret") },
    });
    t.not([401, 403].includes(ok.statusCode), true, `${r} with credentials from ${REMOTE}: ${ok.statusCode}`);
    t.equal(ok.headers["x-frame-options"], "deny", "http_server_config headers");
  }
});
