// The exporter-toolkit web configuration: what node_exporter accepts parses, the toolkit's own sample
// shape included; what the agent cannot honour is refused by name; and the access rules on the routes
// (probes open, authentication everywhere else when configured, detail for loopback only otherwise).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import t from "tap";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { renderScan } from "../../../agent/server/rendered-scan.js";
import { BasicAuthChecker, DETAIL_ROUTES, isLoopback } from "../../../agent/server/access.js";
import { registerVerifyRoute } from "../../../agent/server/verify-route.js";
import { buildApp } from "../../../agent/server/app.js";
import { AgentState } from "../../../agent/server/state.js";
import { ReportSummary } from "../../../agent/server/summary.js";
import {
  loadWebConfig,
  parseWebConfig,
  WebConfigError,
  type WebSecurity,
} from "../../../agent/server/web-config.js";
import { movedWithBlackHole, reportOf } from "../../helpers/reports.js";

const HASH = bcrypt.hashSync("s3cret", 4);

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
  t.same(parseWebConfig("", "empty.yml"), {}, "an empty file turns nothing on, as in the toolkit");
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
  for (const [text, want] of bad) {
    let caught: unknown = null;
    try {
      parseWebConfig(text, "w.yml");
    } catch (e) {
      caught = e;
    }
    t.ok(caught instanceof WebConfigError, `refused: ${JSON.stringify(text)}`);
    t.match(String((caught as Error | null)?.message), want, JSON.stringify(text));
    t.match(String((caught as Error | null)?.message), /^web config w\.yml: /);
  }
});

t.test("files are read relative to the config file; a missing one is a named failure", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-webcfg-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "tls.crt"), "CERT");
  writeFileSync(join(dir, "tls.key"), "KEY");
  writeFileSync(join(dir, "web.yml"), "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n");
  const s = await loadWebConfig(join(dir, "web.yml"));
  t.equal(s.tls?.cert.toString(), "CERT");
  t.equal(s.tls?.minVersion, "TLSv1.2", "the toolkit's default minimum, TLS 1.2");
  writeFileSync(join(dir, "web2.yml"), "tls_server_config:\n  cert_file: nope.crt\n  key_file: tls.key\n");
  await t.rejects(loadWebConfig(join(dir, "web2.yml")), /cert_file .*nope\.crt: ENOENT/);
  await t.rejects(loadWebConfig(join(dir, "absent.yml")), /absent\.yml: ENOENT/);
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

async function app(security: WebSecurity | null, detailFrom: "loopback" | "any") {
  const state = new AgentState(new AgentMetrics({ version: "0.1.0" }));
  state.record(await renderScan(reportOf(movedWithBlackHole())));
  const a = buildApp(state, {
    retryAfterS: 60,
    lookupVirtualServer: async () => ({ status: "not-found" }),
    access: { security, detailFrom },
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
    { source: "w.yml", tls: null, users: new Map([["prom", HASH]]), headers: { "X-Frame-Options": "deny" } },
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
