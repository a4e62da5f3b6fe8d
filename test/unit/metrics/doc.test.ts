import t from "tap";
import { readFileSync } from "node:fs";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { metricsDoc } from "../../../agent/metrics/doc.js";
import { METRIC } from "../../../agent/metrics/names.js";

const DOC = new URL("../../../docs/metrics.md", import.meta.url);

t.test("docs/metrics.md is what the registry says (npm run docs:metrics rewrites it)", async (t) => {
  const described = await new AgentMetrics({ version: "doc", processMetrics: true }).describe();
  t.equal(readFileSync(DOC, "utf8"), metricsDoc(described));
});

t.test("every metric name the code defines is in the doc, with a type and help", async (t) => {
  const described = await new AgentMetrics({ version: "doc", processMetrics: true }).describe();
  const byName = new Map(described.map((m) => [m.name, m]));
  for (const name of Object.values(METRIC)) {
    const m = byName.get(name);
    t.ok(m, `${name} described`);
    t.ok(m && m.help.length > 10 && ["gauge", "counter"].includes(m.type), `${name}: ${m?.type}`);
    t.equal(m?.name.endsWith("_total"), m?.type === "counter", `${name}: _total exactly on counters`);
  }
});
