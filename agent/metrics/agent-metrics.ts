import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import type { NodeReport } from "../report/schema.js";
import { METRIC } from "./names.js";
import { NODE_GAUGES, nodeMetricValues, type NodeGaugeName } from "./node-values.js";

export interface AgentMetricsOptions {
  version: string;
  /** process_* and nodejs_* from prom-client: memory must stay flat across scans, and this is how it is seen. */
  processMetrics?: boolean;
}

const TOTAL_NAMED_GAUGES = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
];

/**
 * The agent's own registry (never prom-client's global one). Node gauges change only in
 * `recordScan`, all at once and synchronously, so a scrape never sees half of one scan and half of
 * another, and nothing is computed at scrape time.
 */
export class AgentMetrics {
  readonly registry = new Registry();
  private readonly gauges: Record<NodeGaugeName, Gauge>;
  private readonly scans: Counter;
  private readonly overruns: Counter;

  constructor(opts: AgentMetricsOptions) {
    const buildInfo = new Gauge({
      name: METRIC.buildInfo,
      help: "The agent's version; always 1",
      labelNames: ["version"],
      registers: [this.registry],
    });
    buildInfo.set({ version: opts.version }, 1);
    this.scans = new Counter({
      name: METRIC.scans,
      help: "Scans completed since the agent started",
      registers: [this.registry],
    });
    this.overruns = new Counter({
      name: METRIC.scanOverruns,
      help: "Scan ticks skipped because the previous scan was still running",
      registers: [this.registry],
    });
    // Node gauges start unregistered: before the first scan there is no reading, not a zero.
    this.gauges = Object.fromEntries(
      Object.entries(NODE_GAUGES).map(([name, d]) => [
        name,
        new Gauge({ name, help: d.help, labelNames: [...d.labels], registers: [] }),
      ]),
    ) as Record<NodeGaugeName, Gauge>;
    if (opts.processMetrics) {
      collectDefaultMetrics({ register: this.registry });
      // Gauges named *_total break Prometheus' naming rules (promtool check metrics flags them);
      // the per-type nodejs_active_* gauges carry the same numbers.
      for (const name of TOTAL_NAMED_GAUGES) this.registry.removeSingleMetric(name);
    }
  }

  recordScan(report: NodeReport): void {
    const values = nodeMetricValues(report);
    for (const name of Object.keys(values) as NodeGaugeName[]) {
      const g = this.gauges[name];
      const series = values[name];
      if (series === null) {
        this.registry.removeSingleMetric(name);
        continue;
      }
      // reset() drops label sets of the previous scan, so a cleared finding's series disappears.
      g.reset();
      for (const s of series) g.set(s.labels, s.value);
      if (this.registry.getSingleMetric(name) === undefined) this.registry.registerMetric(g);
    }
    this.scans.inc();
  }

  recordOverrun(): void {
    this.overruns.inc();
  }

  contentType(): string {
    return this.registry.contentType;
  }

  exposition(): Promise<string> {
    return this.registry.metrics();
  }
}
