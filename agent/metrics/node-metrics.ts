// prom-client's own classes, imported one by one: its index also loads the default metrics, the cluster
// aggregator and the push gateway, and through them @opentelemetry/api (83 modules in all), which the
// scan thread would keep for its life and never use (~10 MB of its RSS:
// bench/results/serve-memory-levers.md). The same code renders, so the same text.
import Counter from "prom-client/lib/counter.js";
import Gauge from "prom-client/lib/gauge.js";
import Registry from "prom-client/lib/registry.js";
import type { Counter as CounterMetric, Gauge as GaugeMetric } from "prom-client";
import type { NodeReport } from "../report/schema.js";
import { NODE_METRICS, nodeMetricValues, type NodeMetricName } from "./node-values.js";

/**
 * The metrics derived from a report, in a registry of their own: the scan thread renders them once per
 * scan, so the serving thread only joins finished text to its own (agent-metrics.ts).
 */
export class NodeMetrics {
  private readonly registry = new Registry();
  private readonly metrics: Record<NodeMetricName, GaugeMetric | CounterMetric>;

  constructor() {
    // Node metrics start unregistered: before the first scan there is no reading, not a zero.
    this.metrics = Object.fromEntries(
      Object.entries(NODE_METRICS).map(([name, d]) => {
        const config = { name, help: d.help, labelNames: [...d.labels], registers: [] };
        return [name, "type" in d && d.type === "counter" ? new Counter(config) : new Gauge(config)];
      }),
    ) as Record<NodeMetricName, GaugeMetric | CounterMetric>;
  }

  /** The exposition of one report's metrics (HELP and TYPE once per family), all set before it renders. */
  render(report: NodeReport): Promise<string> {
    const values = nodeMetricValues(report);
    for (const name of Object.keys(values) as NodeMetricName[]) {
      const m = this.metrics[name];
      const series = values[name];
      if (series === null) {
        this.registry.removeSingleMetric(name);
        continue;
      }
      // reset() drops label sets of the previous scan, so a cleared finding's series disappears.
      m.reset();
      // A re-exported counter takes kube-proxy's value as read: reset, then one increment by it.
      for (const s of series) {
        if (m instanceof Counter) m.inc(s.labels, s.value);
        else m.set(s.labels, s.value);
      }
      if (this.registry.getSingleMetric(name) === undefined) this.registry.registerMetric(m);
    }
    // Gauges without a collect() are read synchronously when render starts, so a body is one scan's.
    return this.registry.metrics();
  }
}

/** One report's node metrics, rendered by a registry of its own (tests, and anything rendering one report). */
export function nodeMetricsText(report: NodeReport): Promise<string> {
  return new NodeMetrics().render(report);
}
