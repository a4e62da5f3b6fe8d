// Who may read the detail (addresses, firewall rule text, findings with their evidence), decided on
// the route the router matched, never on how the request spelled it. A real agent and a real
// collector `serve` listen on every address of a network namespace this test made; clients on the
// node network (a non-loopback source address in it) send every route in every spelling the router
// may accept — percent-escapes of each character, absolute form, dot segments, doubled and trailing
// slashes, case, suffixes — and the same from loopback. Each spelling the router routes to a detail
// route answers loopback and is refused to everyone else; basic auth still answers 401 to them all.
// The kube-proxy the agent reads is the STAND-IN, in the same namespace.
import { spawnSync } from "node:child_process";
import { writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import t, { type Test } from "tap";
import { netnsAvailable, type NetNs } from "../helpers/netns.js";
import { ATTACKER_IP, NODE_IP, nodeNetwork, rawRequests, type RawAnswer } from "../helpers/netns-clients.js";
import { selfSigned } from "../helpers/self-signed.js";
import { spellings } from "../helpers/spellings.js";
import { startStandin } from "../helpers/standin.js";
import { agentBuilt, startAgent } from "./agent-process.js";
import { COLLECTOR_CLI, serveCollectorIn } from "./collector-fleet.js";

t.setTimeout(900_000);
const skip =
  (!agentBuilt() && "run npx tsc -p . first") || (!netnsAvailable() && "cannot create network namespaces");

const IPVS_QUERY = "protocol=TCP&address=10.96.0.10&port=53";
const AGENT_ROUTES = {
  probe: ["/healthz", "/readyz"],
  public: ["/", "/metrics", "/report/summary", "/report/schema", "/report/fleet/schema"],
  detail: ["/report", "/report/previous", "/report/fleet", "/parity", "/ipvs/virtual-server", "/verify"],
};
const COLLECTOR_ROUTES = { probe: ["/healthz"], public: ["/metrics"], detail: ["/report", "/"] };
type Routes = typeof AGENT_ROUTES;

const ok = (s: number | null) => s !== null && s >= 200 && s < 300;
/** The framework's own answers to a target no route took (the hardened server's fixed words). */
const notRouted = (a: RawAnswer) =>
  a.status === 400 || (a.status === 404 && /^\{"error":"not found"\}$/.test(a.body));
const targetsOf = (route: string) => spellings(route, route === "/ipvs/virtual-server" ? IPVS_QUERY : "");

async function servedNode(t: Test, extra: string[] = []) {
  const ns = nodeNetwork(t);
  const kp = await startStandin(
    { mode: "nftables", version: "v1.34.2", lastSync: { agoSeconds: 3 } },
    ns.name,
  );
  t.teardown(() => kp.stop());
  const agent = await startAgent({
    netns: ns.name,
    args: [
      "--listen",
      "0.0.0.0",
      "--scan-interval-s",
      "2",
      // /verify answers at once: the sync window's wait is not what this test is about.
      "--sync-window-s",
      "0",
      "--kube-proxy-metrics-url",
      kp.metricsUrl,
      "--kube-proxy-health-url",
      kp.healthUrl,
      ...extra,
    ],
  });
  t.teardown(() => agent.stop());
  // /report/previous needs two.
  await agent.scans(2);
  return { ns, agent };
}

/** Every spelling of every route, from loopback and from the node network. */
async function matrix(t: Test, ns: NetNs, port: number, routes: Routes, tls = false) {
  const all = Object.values(routes).flat();
  const targets = all.flatMap(targetsOf);
  const local = await rawRequests(t, ns, { host: "127.0.0.1", port, tls }, "127.0.0.1", targets);
  const remote = await rawRequests(t, ns, { host: NODE_IP, port, tls }, ATTACKER_IP, targets);
  const at = (route: string) => {
    const ts = new Set(targetsOf(route));
    const pick = (a: RawAnswer[]) => a.filter((x) => ts.has(x.target));
    return { local: pick(local), remote: pick(remote) };
  };
  return { at };
}

function holdsTheLoopbackGuard(t: Test, m: Awaited<ReturnType<typeof matrix>>, routes: Routes) {
  for (const route of routes.detail) {
    const { local, remote } = m.at(route);
    const routed = local.filter((a) => !notRouted(a)).map((a) => a.target);
    // The router does decode escapes and take absolute form: the guard faces real aliases.
    t.ok(
      routed.length >= 3,
      `${route}: ${routed.length} spellings reach it from loopback (${routed.slice(0, 4).join(" ")} …)`,
    );
    const leaked = remote.filter((a) => a.status !== 403 && !notRouted(a));
    t.same(
      leaked.map((a) => `${a.target} -> ${a.status}`),
      [],
      `${route}: the node network gets 403 or the router's own 400/404, never the route's answer`,
    );
    const unguarded = remote.filter((a) => routed.includes(a.target) && a.status !== 403);
    t.same(
      unguarded.map((a) => `${a.target} -> ${a.status}`),
      [],
      `${route}: every spelling the router takes for it is 403 from the node network`,
    );
  }
  for (const route of [...routes.probe, ...routes.public]) {
    const { local, remote } = m.at(route);
    const differs = remote.filter((a, i) => a.status !== local[i]!.status);
    t.same(
      differs.map((a, i) => `${a.target}: ${local[i]!.status} here, ${a.status} there`),
      [],
      `${route}: every spelling answers the node network as it answers loopback`,
    );
    t.ok(
      remote.some((a) => ok(a.status)),
      `${route} is open`,
    );
  }
}

t.test("the agent: the detail answers loopback only, however the request spells it", { skip }, async (t) => {
  const { ns, agent } = await servedNode(t);
  const m = await matrix(t, ns, agent.port, AGENT_ROUTES);
  holdsTheLoopbackGuard(t, m, AGENT_ROUTES);
  const escaped = m.at("/report").local.find((a) => a.target === "/%72eport");
  t.match(
    JSON.parse(escaped?.body ?? "{}"),
    { node: "e2e-node" },
    "from loopback /%72eport is the NodeReport",
  );
});

const PASSWORD = "correct horse";
const AUTH = { authorization: `Basic ${Buffer.from(`prom:${PASSWORD}`).toString("base64")}` };

/** A web config with basic auth (and TLS, with a certificate made here by openssl); removed at teardown. */
function webConfig(t: Test, tls: boolean) {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-access-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  if (tls) selfSigned(dir, "tls");
  writeFileSync(
    join(dir, "web.yml"),
    (tls ? "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n" : "") +
      `basic_auth_users:\n  prom: ${bcrypt.hashSync(PASSWORD, 4)}\n`,
  );
  return join(dir, "web.yml");
}

/** Without credentials every spelling of every route but the probes is 401 (or the parser's 400). */
function allNeedAuth(t: Test, m: Awaited<ReturnType<typeof matrix>>, routes: Routes) {
  for (const route of [...routes.public, ...routes.detail]) {
    for (const [where, answers] of Object.entries(m.at(route))) {
      const bad = answers.filter((a) => ![400, 401].includes(a.status ?? 0));
      t.same(
        bad.map((a) => `${a.target} -> ${a.status}`),
        [],
        `${route} from ${where}: 401 (or 400) without credentials`,
      );
    }
  }
  for (const route of routes.probe)
    t.ok(
      m.at(route).remote.some((a) => ok(a.status)),
      `${route} open without credentials (the kubelet's probe)`,
    );
}

t.test(
  "the agent with basic auth: every spelling of every route but the probes is 401",
  { skip },
  async (t) => {
    const { ns, agent } = await servedNode(t, ["--web.config.file", webConfig(t, false)]);
    const m = await matrix(t, ns, agent.port, AGENT_ROUTES);
    allNeedAuth(t, m, AGENT_ROUTES);
    const auth = AUTH;
    const withAuth = await rawRequests(
      t,
      ns,
      { host: NODE_IP, port: agent.port },
      ATTACKER_IP,
      ["/%72eport", "http://x/report"],
      auth,
    );
    t.same(
      withAuth.map((a) => a.status),
      [200, 200],
      "an authenticated client on the node network reads the detail",
    );
  },
);

/** The collector's `serve` in the namespace, gathering from the agent there; resolves once it has a report. */
async function servedCollector(t: Test, ns: NetNs, agentPort: number, extra: string[] = []) {
  const args = ["--source", "static", "--agents", `e2e-node=http://127.0.0.1:${agentPort}`];
  const s = await serveCollectorIn(t, ns.name, [...args, "--interval-s", "3600", ...extra], {
    gathered: true,
  });
  return s.port;
}

t.test(
  "the collector's serve: the fleet report answers loopback only, however spelled",
  { skip },
  async (t) => {
    const { ns, agent } = await servedNode(t);
    const port = await servedCollector(t, ns, agent.port);
    const m = await matrix(t, ns, port, COLLECTOR_ROUTES);
    holdsTheLoopbackGuard(t, m, COLLECTOR_ROUTES);
    const report = m.at("/report").local.find((a) => a.target === "/report");
    t.match(report?.body, /"e2e-node"/, "from loopback /report is the fleet report");
  },
);

t.test("the collector's serve with --detail-from any: the node network reads it", { skip }, async (t) => {
  const { ns, agent } = await servedNode(t);
  const port = await servedCollector(t, ns, agent.port, ["--detail-from", "any"]);
  const r = await rawRequests(t, ns, { host: NODE_IP, port }, ATTACKER_IP, ["/report", "/"]);
  t.same(
    r.map((a) => a.status),
    [200, 200],
  );
});

t.test(
  "the collector's serve with a web config: TLS, and basic auth on every route but /healthz",
  { skip },
  async (t) => {
    const { ns, agent } = await servedNode(t);
    const port = await servedCollector(t, ns, agent.port, ["--web.config.file", webConfig(t, true)]);
    const m = await matrix(t, ns, port, COLLECTOR_ROUTES, true);
    allNeedAuth(t, m, COLLECTOR_ROUTES);
    // One first: its verdict is remembered, and the rest need no comparison of their own.
    const target = { host: NODE_IP, port, tls: true };
    const first = await rawRequests(t, ns, target, ATTACKER_IP, ["/report"], AUTH);
    const r = [
      ...first,
      ...(await rawRequests(t, ns, target, ATTACKER_IP, ["/%72eport", "/", "/metrics"], AUTH)),
    ];
    t.same(
      r.map((a) => a.status),
      [200, 200, 200, 200],
      "an authenticated client on the node network reads the fleet report over TLS",
    );
  },
);

t.test("the collector's serve refuses a bad web config by name, before it listens", { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-access-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "web.yml"), "basic_auth_users:\n  prom: not-a-bcrypt-hash\n");
  for (const file of [join(dir, "web.yml"), join(dir, "absent.yml")]) {
    const r = spawnSync(
      process.execPath,
      [COLLECTOR_CLI, "serve", "--source", "static", "--agents", "http://127.0.0.1:1", "--port", "0"].concat([
        "--web.config.file",
        file,
      ]),
      { encoding: "utf8", timeout: 120_000 },
    );
    t.equal(r.status, 2, `exit 2 (usage) for ${file}`);
    t.match(r.stderr, /^proxyscope: web config .*(bcrypt|ENOENT)/m, "the file and what is wrong with it");
    t.notMatch(r.stderr, /serving on/, "it never listened");
  }
});

t.test("the collector's serve says at start what its web config leaves open", { skip }, async (t) => {
  const ns = nodeNetwork(t);
  const { lines } = await serveCollectorIn(t, ns.name, [
    "--source",
    "static",
    "--agents",
    "n=http://127.0.0.1:1",
    "--interval-s",
    "3600",
    "--web.config.file",
    webConfig(t, false),
  ]);
  t.match(
    lines.join("\n"),
    /^proxyscope: web config .*web\.yml: basic auth over plain HTTP: passwords cross the network in clear text/m,
    "the same warning the agent logs",
  );
});
