// Access is decided for every request both servers answer, not only for the GET routes they list: every
// method (Fastify's own HEAD routes, and OPTIONS/POST/... that only the not-found handler takes), a path
// no route took, and a route registered after the access model (as serve registers /verify, or a plugin
// would). From a client on the node network nothing of the detail answers; with basic auth configured,
// nothing but the probes answers without it.
import bcrypt from "bcryptjs";
import type { FastifyInstance } from "fastify";
import t, { type Test } from "tap";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { DETAIL_ROUTES } from "../../../agent/server/access.js";
import { buildApp } from "../../../agent/server/app.js";
import { renderScan } from "../../../agent/server/rendered-scan.js";
import { AgentState } from "../../../agent/server/state.js";
import { registerVerifyRoute } from "../../../agent/server/verify-route.js";
import type { WebSecurity } from "../../../common/web-config.js";
import { rollup } from "../../../collector/plan/rollup.js";
import { buildServer } from "../../../collector/server.js";
import { apiNode, input, ok } from "../../helpers/fleet.js";
import { movedWithBlackHole, reportOf } from "../../helpers/reports.js";

const REMOTE = "10.1.2.3";
const METHODS = ["GET", "HEAD", "OPTIONS", "POST", "PUT", "DELETE", "PATCH"] as const;
const IPVS_QUERY = "?protocol=TCP&address=10.96.0.10&port=53";
const SECURITY: WebSecurity = {
  source: "w.yml",
  tls: null,
  users: new Map([["prom", bcrypt.hashSync("s3cret", 4)]]),
  headers: {},
  warnings: [],
};

/** A route registered after the access model, in a plugin of its own: classified by nobody, so detail. */
function lateRoute(app: FastifyInstance) {
  void app.register(async (child) => {
    child.get("/late", async () => ({ secret: "late route" }));
  });
}

async function agent(security: WebSecurity | null) {
  const state = new AgentState(new AgentMetrics({ version: "0.1.0" }));
  state.record(await renderScan(reportOf(movedWithBlackHole())));
  const a = buildApp(state, {
    lookupVirtualServer: async () => ({ status: "not-found" }),
    access: { security, detailFrom: "loopback" },
  });
  registerVerifyRoute(a, state, async () => {
    throw new Error("no verify in this test");
  });
  lateRoute(a);
  return a;
}

async function collector(security: WebSecurity | null) {
  const report = rollup(input([ok("a", "ipvs", "ready")], [apiNode("a")]));
  const s = buildServer({
    intervalMs: 3_600_000,
    gather: async () => ({ ok: true, report }),
    log: () => undefined,
    security,
  });
  lateRoute(s.app);
  s.start();
  s.stop();
  // The one gather resolves on the next turns of the loop.
  for (let i = 0; i < 20 && (await s.app.inject({ url: "/report" })).statusCode === 503; i++)
    await new Promise((r) => setImmediate(r));
  return s.app;
}

const SERVERS = {
  agent: {
    make: agent,
    detail: [...DETAIL_ROUTES, "/late"],
    open: ["/healthz", "/readyz"],
  },
  collector: {
    make: collector,
    detail: ["/report", "/", "/late"],
    open: ["/healthz"],
  },
};

async function answers(t: Test, app: FastifyInstance, paths: string[], remoteAddress: string) {
  const out: { what: string; status: number; body: string }[] = [];
  for (const path of [...paths, "/no-such-route"])
    for (const method of METHODS) {
      const url = path === "/ipvs/virtual-server" ? `${path}${IPVS_QUERY}` : path;
      const r = await app.inject({ method, url, remoteAddress });
      out.push({ what: `${method} ${path} from ${remoteAddress}`, status: r.statusCode, body: r.body });
    }
  return out;
}

for (const [name, server] of Object.entries(SERVERS)) {
  t.test(`${name}: from the node network no method on any path reads the detail`, async (t) => {
    const app = await server.make(null);
    t.teardown(() => app.close());
    const local = await answers(t, app, server.detail, "127.0.0.1");
    for (const path of ["/late", "/report"])
      t.ok(
        local.some((a) => a.what.startsWith(`GET ${path} `) && a.status === 200),
        `GET ${path} answers loopback (the test can see a leak)`,
      );
    const remote = await answers(t, app, server.detail, REMOTE);
    const leaked = remote.filter((a) => ![403, 404, 405].includes(a.status));
    t.same(
      leaked.map((a) => `${a.what}: ${a.status}`),
      [],
      "403 on a detail route, 404/405 where no route takes the method, nothing else",
    );
    const routed = remote.filter(
      (a) => (a.what.startsWith("GET ") || a.what.startsWith("HEAD ")) && !a.what.includes("/no-such-route"),
    );
    t.same(
      routed.filter((a) => a.status !== 403).map((a) => `${a.what}: ${a.status}`),
      [],
      "every routed GET and HEAD of the detail is 403",
    );
    t.same(
      remote.filter((a) => /secret|e2e|10\.96\.|"node"/.test(a.body)).map((a) => a.what),
      [],
      "no answer body carries the detail",
    );
  });

  t.test(`${name} with basic auth: every method on every path but the probes is 401`, async (t) => {
    const app = await server.make(SECURITY);
    t.teardown(() => app.close());
    for (const from of [REMOTE, "127.0.0.1"]) {
      const all = await answers(t, app, server.detail, from);
      t.same(
        all.filter((a) => a.status !== 401).map((a) => `${a.what}: ${a.status}`),
        [],
        `from ${from}: 401 without credentials, routed or not`,
      );
    }
    for (const path of server.open)
      t.equal((await app.inject({ url: path, remoteAddress: REMOTE })).statusCode, 200, `${path} open`);
  });
}

t.test(
  "the agent's app without access options is closed as the collector's is: detail for loopback",
  async (t) => {
    const state = new AgentState(new AgentMetrics({ version: "0.1.0" }));
    state.record(await renderScan(reportOf(movedWithBlackHole())));
    const app = buildApp(state, { lookupVirtualServer: async () => ({ status: "not-found" }) });
    t.teardown(() => app.close());
    t.equal(
      (await app.inject({ url: "/report", remoteAddress: REMOTE })).statusCode,
      403,
      "/report from afar",
    );
    t.equal(
      (await app.inject({ url: "/report", remoteAddress: "127.0.0.1" })).statusCode,
      200,
      "from loopback",
    );
    t.equal((await app.inject({ url: "/metrics", remoteAddress: REMOTE })).statusCode, 200, "/metrics open");
  },
);
