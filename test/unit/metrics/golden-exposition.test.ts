import t from "tap";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { renderScan } from "../../../agent/server/rendered-scan.js";
import { fleetMetrics } from "../../../collector/render/fleet-metrics.js";
import { matchGolden } from "../../helpers/golden.js";
import { recordedIpvsNode } from "../../helpers/recorded-node.js";
import { reviewFleet } from "../../helpers/review-fleet.js";

// A whole /metrics body against a golden file, as node_exporter's and kube-state-metrics' end-to-end
// tests do: every family, HELP and TYPE line, label and value a scrape of this node sees, so a change to
// any of them is a diff to accept on purpose (UPDATE_GOLDEN=1). The runtime's families (process_*,
// nodejs_*) keep their HELP and TYPE lines; their samples depend on the machine and the Node.js build.

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

/** The exposition with what depends on the clock, the machine or the build taken out. */
function normalised(body: string): string {
  return body
    .split("\n")
    .flatMap((line) => {
      if (line === "" || line.startsWith("#")) return [line];
      const name = METRIC_NAME.exec(line)?.[0] ?? "";
      if (!name.startsWith("proxyscope_")) return [];
      return [
        line.replace(
          /^(proxyscope_build_info\{version=")[^"]*",revision="[^"]*"/,
          '$1<version>",revision="<revision>"',
        ),
      ];
    })
    .join("\n");
}

t.test("the agent's /metrics for a recorded ipvs node, rendered the way serve renders it", async (t) => {
  // serve: the scan thread renders the report's metrics once (renderScan), the serving thread joins
  // them after its own registry, with the process metrics on (agent/serve.ts).
  const metrics = new AgentMetrics({ version: "0.1.0", processMetrics: true });
  metrics.recordScan((await renderScan(recordedIpvsNode())).metrics);
  const body = (await metrics.expositionBytes()).toString("utf8");
  t.match(body, /^process_cpu_user_seconds_total /m, "the runtime's samples are in the real body");
  matchGolden(t, "metrics/agent-recorded-ipvs.prom", normalised(body));
});

t.test("the collector's fleet gauges for the review fleet", async (t) => {
  const m = fleetMetrics();
  m.update(reviewFleet(), 2.5);
  const body = await m.registry.metrics();
  t.match(
    body,
    /^proxyscope_build_info\{version="[^"]+",revision="[^"]+"\} 1$/m,
    "the collector's build_info",
  );
  matchGolden(t, "metrics/fleet-review.prom", normalised(body));
});
