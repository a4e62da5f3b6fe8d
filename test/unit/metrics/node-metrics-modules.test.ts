// The scan thread renders the node metrics with prom-client's classes imported one by one
// (agent/metrics/node-metrics.ts): the package's index would also load its default metrics and, through
// them, @opentelemetry/api, which a thread keeps for its life. The text is still prom-client's own:
// golden-exposition.test.ts holds it to the file the whole package rendered.
import { createRequire } from "node:module";
import t from "tap";
import { nodeMetricsText } from "../../../agent/metrics/node-metrics.js";
import { recordedIpvsNode } from "../../helpers/recorded-node.js";

const cache = createRequire(import.meta.url).cache;
const loaded = (path: string) => Object.keys(cache).filter((f) => f.includes(`/node_modules/${path}`));

t.test("rendering a report's metrics loads prom-client's three classes, not its index", async (t) => {
  const text = await nodeMetricsText(recordedIpvsNode());
  t.match(text, /^# TYPE proxyscope_node_phase gauge$/m, "rendered");
  t.match(text, /^# TYPE proxyscope_ipvs_connections_total counter$/m);
  t.same(loaded("prom-client/index.js"), [], "prom-client's index");
  t.same(loaded("@opentelemetry/"), [], "@opentelemetry/api");
  t.ok(loaded("prom-client/lib/registry.js").length === 1, "its registry, from the package itself");
});
