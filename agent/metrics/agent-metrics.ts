import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import type { NodeReport } from "../report/schema.js";
import { METRIC } from "./names.js";
import { NODE_METRICS, nodeMetricValues, type NodeMetricName } from "./node-values.js";

export interface AgentMetricsOptions {
  version: string;
  /** process_* and nodejs_* from prom-client: memory must stay flat across scans, and this is how it is seen. */
  processMetrics?: boolean;
}

export interface MetricDescription {
  name: string;
  type: string;
  help: string;
  labels: string[];
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
  private readonly nodeMetrics: Record<NodeMetricName, Gauge | Counter>;
  private readonly scans: Counter;
  private readonly overruns: Counter;
  private readonly failures: Counter;
  /** The exposition, rendered when something changed (a scan, an overrun), never per scrape. */
  private body: Promise<string>;

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
    this.failures = new Counter({
      name: METRIC.scanFailures,
      help: "Scans that ended without a report (the scan thread crashed or exited); the last report stays served",
      registers: [this.registry],
    });
    // Node metrics start unregistered: before the first scan there is no reading, not a zero.
    this.nodeMetrics = Object.fromEntries(
      Object.entries(NODE_METRICS).map(([name, d]) => {
        const config = { name, help: d.help, labelNames: [...d.labels], registers: [] };
        return [name, "type" in d && d.type === "counter" ? new Counter(config) : new Gauge(config)];
      }),
    ) as Record<NodeMetricName, Gauge | Counter>;
    if (opts.processMetrics) {
      collectDefaultMetrics({ register: this.registry });
      // Gauges named *_total break Prometheus' naming rules (promtool check metrics flags them);
      // the per-type nodejs_active_* gauges carry the same numbers.
      for (const name of TOTAL_NAMED_GAUGES) this.registry.removeSingleMetric(name);
    }
    this.body = this.render();
  }

  // Gauges without a collect() are read synchronously when render starts, so a body is one scan's.
  private render(): Promise<string> {
    return this.registry.metrics();
  }

  recordScan(report: NodeReport): void {
    const values = nodeMetricValues(report);
    for (const name of Object.keys(values) as NodeMetricName[]) {
      const m = this.nodeMetrics[name];
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
    this.scans.inc();
    this.body = this.render();
  }

  /** Every metric this agent can export (node metrics included before their first reading), for docs/metrics.md. */
  async describe(): Promise<MetricDescription[]> {
    const own = (await this.registry.getMetricsAsJSON()).map((m) => ({
      name: m.name,
      type: String(m.type),
      help: m.help,
      labels: [...((this.registry.getSingleMetric(m.name) as { labelNames?: string[] }).labelNames ?? [])],
    }));
    const node = Object.entries(NODE_METRICS).map(([name, d]) => ({
      name,
      type: "type" in d ? d.type : "gauge",
      help: d.help,
      labels: [...d.labels],
    }));
    const seen = new Set(own.map((m) => m.name));
    return [...own, ...node.filter((m) => !seen.has(m.name))];
  }

  recordScanFailure(): void {
    this.failures.inc();
    this.body = this.render();
  }

  recordOverrun(): void {
    this.overruns.inc();
    this.body = this.render();
  }

  contentType(): string {
    return this.registry.contentType;
  }

  /** The body of the last render (process_* as of the last scan or overrun). */
  exposition(): Promise<string> {
    return this.body;
  }
}
