import t from "tap";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";

// The agent's own exposition is rendered on the serving thread once per scan; with the process
// metrics that render must let the event loop turn between families rather than hold it for the
// whole registry (render cost). Counted in turns of the loop, never timed.

const node = new TextEncoder().encode(
  "# HELP proxyscope_phase p\n# TYPE proxyscope_phase gauge\nproxyscope_phase 1\n",
);

t.test("the process metrics render lets the event loop turn between families", async (t) => {
  const m = new AgentMetrics({ version: "0.1.0", processMetrics: true });
  await m.expositionBytes();
  let turns = 0;
  let done = false;
  const tick = () => {
    turns++;
    if (!done) setImmediate(tick);
  };
  m.recordScan(node);
  setImmediate(tick);
  const body = (await m.expositionBytes()).toString("utf8");
  done = true;
  const families = body.split("\n").filter((l) => l.startsWith("# TYPE ")).length;
  t.ok(turns >= 10, `${turns} turns of the event loop during a render of ${families} families`);
});

t.test("the text is prom-client's, and the agent's counters are of the scan recorded", async (t) => {
  const m = new AgentMetrics({ version: "0.1.0", processMetrics: true });
  m.recordScan(node);
  const body = (await m.expositionBytes()).toString("utf8");
  // The same families, in the same order and format, as registry.metrics() (values of process
  // metrics move between two reads, so names and comments are compared).
  const shape = (s: string) => s.split("\n").filter((l) => l.startsWith("#"));
  const own = await m.registry.metrics();
  t.same(shape(body), [...shape(own), ...shape(new TextDecoder().decode(node))]);
  t.ok(body.startsWith("# HELP proxyscope_build_info"), "the agent's families first");
  t.match(body, /^proxyscope_scans_total 1$/m);
  t.ok(body.endsWith("proxyscope_phase 1\n"), "the node families after a blank line");
  t.match(body, /\n\n# HELP proxyscope_phase p\n/);
});

t.test("without process metrics the text equals registry.metrics() exactly", async (t) => {
  const m = new AgentMetrics({ version: "0.1.0" });
  t.equal(await m.exposition(), await m.registry.metrics());
});
