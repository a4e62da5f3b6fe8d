import t from "tap";
import { DETAIL_ROUTES, PROBE_ROUTES, PUBLIC_ROUTES } from "../../../agent/server/access.js";
import { AGENT_LANDING_ROUTES, agentLandingPage } from "../../../agent/server/landing.js";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { buildApp } from "../../../agent/server/app.js";
import { AgentState } from "../../../agent/server/state.js";
import { VERSION } from "../../../common/version.js";

t.test("every route of the agent is on the landing page, with who may read it", async (t) => {
  const listed = AGENT_LANDING_ROUTES.map((r) => r.path).sort();
  const routes = [...PROBE_ROUTES, ...PUBLIC_ROUTES, ...DETAIL_ROUTES].filter((p) => p !== "/");
  t.same(listed, routes.sort(), "a new route must be described");
  t.ok(PUBLIC_ROUTES.has("/"), "the page itself is public: it says only what the docs say");
  for (const r of AGENT_LANDING_ROUTES) {
    const expected = PROBE_ROUTES.has(r.path) ? "probe" : PUBLIC_ROUTES.has(r.path) ? "public" : "detail";
    t.equal(r.access, expected, `${r.path} is ${expected}`);
  }
});

t.test("the version is escaped", async (t) => {
  const page = agentLandingPage(`1.0.0"><script>alert(1)</script>&`);
  t.notMatch(page, /<script>/);
  t.match(page, /1\.0\.0&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;&amp;/);
});

t.test("GET / is a small HTML page of links, public, before any scan", async (t) => {
  const state = new AgentState(new AgentMetrics({ version: VERSION }));
  const app = buildApp(state, { lookupVirtualServer: async () => ({ status: "not-found" }) });
  t.teardown(() => app.close());
  // From another host, no authentication configured: public routes answer, detail routes do not.
  const r = await app.inject({ url: "/", remoteAddress: "10.0.0.9" });
  t.equal(r.statusCode, 200);
  t.match(r.headers["content-type"], /^text\/html; charset=utf-8/);
  t.match(r.body, /^<!doctype html>/i);
  t.match(r.body, /<title>proxyscope agent<\/title>/);
  for (const path of ["/metrics", "/healthz", "/readyz", "/report", "/report/summary"])
    t.match(r.body, `<a href="${path}">`, `links to ${path}`);
  t.match(r.body, VERSION);
  t.equal((await app.inject({ url: "/report", remoteAddress: "10.0.0.9" })).statusCode, 403);
});
