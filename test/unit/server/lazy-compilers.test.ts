// Both servers declare no route schema, so Fastify's schema compilers (ajv, fast-json-stringify) stay
// unloaded, and nothing fetches, so Node's undici too: a serving thread keeps every module it loads for
// its whole life (common/http-server.ts).
// A route that does declare one must still be validated and serialized as Fastify would.
import { createRequire } from "node:module";
import t from "tap";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { buildApp } from "../../../agent/server/app.js";
import { AgentState } from "../../../agent/server/state.js";
import { hardenedFastify } from "../../../common/http-server.js";

const cache = createRequire(import.meta.url).cache;
const loaded = (path: string) => Object.keys(cache).some((f) => f.includes(`/node_modules/${path}`));
// Fastify's prebuilt error serializer always loads fast-json-stringify/lib/serializer.js (small); the
// compiler is its index.js.
const COMPILER = "fast-json-stringify/index.js";

t.test("the agent's app answers without loading a schema compiler", async (t) => {
  t.notOk(loaded("ajv/"), "not loaded before the app (else this test could not tell)");
  const app = buildApp(new AgentState(new AgentMetrics({ version: "0.0.0" })), {
    lookupVirtualServer: async () => ({ status: "ipvs-absent" }),
  });
  t.teardown(() => app.close());
  await app.ready();
  t.equal((await app.inject("/healthz")).statusCode, 200);
  t.equal(
    (await app.inject("/ipvs/virtual-server?protocol=TCP")).statusCode,
    400,
    "its query checked by zod",
  );
  t.notOk(loaded("ajv/"), "ajv");
  t.notOk(loaded(COMPILER), "fast-json-stringify's compiler");
});

t.test("nor Node's undici: node:http is required, not imported as an ES module", async (t) => {
  // The app above was built by now; undici is what node:http's lazy WebSocket getter loads.
  // Node's own list of the internal modules it loaded (not in @types/node).
  const list = () => (process as unknown as { moduleLoadList: string[] }).moduleLoadList;
  const undici = () => list().some((m) => m.includes("undici"));
  t.notOk(undici(), "undici is not loaded");
  t.ok((await import("node:http")).STATUS_CODES, "an ES import of node:http");
  t.ok(undici(), "loads it (else this test could not tell)");
});

t.test("a route with a schema still gets Fastify's validator and serializer", async (t) => {
  const app = hardenedFastify();
  t.teardown(() => app.close());
  app.get(
    "/n",
    {
      schema: {
        querystring: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
        response: { 200: { type: "object", properties: { n: { type: "integer" } } } },
      },
    },
    (req, reply) => reply.send({ n: (req.query as { n: number }).n, extra: "dropped by the serializer" }),
  );
  await app.ready();
  const ok = await app.inject("/n?n=3");
  t.equal(ok.statusCode, 200);
  t.same(JSON.parse(ok.body), { n: 3 }, "coerced to an integer, the undeclared field dropped");
  t.equal((await app.inject("/n?n=x")).statusCode, 400, "refused by the validator");
  t.ok(loaded("ajv/") && loaded(COMPILER), "loaded on the first route that needs them");
});
