import { promisify } from "node:util";
import { gzip as gzipCb } from "node:zlib";
import { Counter, Registry, collectDefaultMetrics } from "prom-client";
import { registerBuildInfo } from "../../common/build-info.js";
import { METRIC, metricStability, type Stability } from "./names.js";

interface AgentMetricsOptions {
  version: string;
  /** The source commit (common/version.ts's REVISION when not given). */
  revision?: string;
  /** process_* and nodejs_* from prom-client: memory must stay flat across scans, and this is how it is seen. */
  processMetrics?: boolean;
}

export interface MetricDescription {
  name: string;
  type: string;
  help: string;
  labels: string[];
  /** The agent's own metrics are stable or experimental; the runtime's (process_*, nodejs_*) null. */
  stability: Stability | null;
}

const AGENT_PREFIX = "proxyscope_";
const gzip = promisify(gzipCb);

const TOTAL_NAMED_GAUGES = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
];

/**
 * The agent's own registry (never prom-client's global one): the process's counters and runtime
 * metrics. The node metrics come from the scan thread as finished text (node-metrics.ts), joined
 * after these once per scan, so a scrape never sees half of one scan and half of another, and
 * nothing is computed at scrape time.
 */
export class AgentMetrics {
  readonly registry = new Registry();
  private readonly scans: Counter;
  private readonly overruns: Counter;
  private readonly failures: Counter;
  private readonly heapReleases: Counter;
  private readonly heapReleasedBytes: Counter;
  /** The last scan's node metrics (none before the first scan: no reading, not a zero). */
  private nodeText: Uint8Array = new Uint8Array(0);
  /** The exposition, rendered when something changed (a scan, an overrun), never per scrape. */
  private body: Promise<Buffer>;
  /** The same render gzipped, made on the first scrape that asks for it and kept until the next render. */
  private gzipped: Promise<Buffer> | null = null;

  constructor(opts: AgentMetricsOptions) {
    registerBuildInfo(this.registry, { version: opts.version, revision: opts.revision });
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
    this.heapReleases = new Counter({
      name: METRIC.scanHeapReleases,
      help: "Times the scan thread gave a large read's garbage back to the OS after a scan (a memory-reducing GC)",
      registers: [this.registry],
    });
    this.heapReleasedBytes = new Counter({
      name: METRIC.scanHeapReleasedBytes,
      help: "V8 heap bytes the scan thread's memory-reducing GCs gave back",
      registers: [this.registry],
    });
    if (opts.processMetrics) {
      // prom-client samples the event loop's delay every 10 ms by default: a timer that wakes this
      // thread 100 times a second, ~2 ms of CPU per second on an idle agent (bench/results/
      // serve-bytes.md). At 100 ms a block shorter than that is seen in proportion to its length.
      collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 100 });
      // Gauges named *_total break Prometheus' naming rules (promtool check metrics flags them);
      // the per-type nodejs_active_* gauges carry the same numbers.
      for (const name of TOTAL_NAMED_GAUGES) this.registry.removeSingleMetric(name);
    }
    this.body = this.render();
  }

  private rerender(): void {
    this.body = this.render();
    this.gzipped = null;
  }

  // The same text as registry.metrics(), one family at a time: that call collects every family in
  // one run of microtasks, the serving thread's longest busy span per scan (~3 ms of CPU, prom-client's
  // event-loop and heap gauges; bench/results/serve-bytes.md). A turn of the event loop between the
  // process families lets requests in. The agent's own families come first and are read before the
  // first turn, with the node text set before it, so both are of the same scan.
  private async render(): Promise<Buffer> {
    const node = this.nodeText;
    const families: string[] = [];
    for (const m of this.registry.getMetricsAsArray()) {
      if (!m.name.startsWith(AGENT_PREFIX)) await new Promise<void>((r) => setImmediate(r));
      families.push(await this.registry.getSingleMetricAsString(m.name));
    }
    // prom-client separates families by a blank line: the node families follow the same way.
    const own = `${families.join("\n\n")}\n`;
    return node.length === 0 ? Buffer.from(own) : Buffer.concat([Buffer.from(`${own}\n`), node]);
  }

  /** A scan completed: its node metrics as the scan thread rendered them (NodeMetrics, UTF-8). */
  recordScan(nodeMetrics: Uint8Array): void {
    this.nodeText = nodeMetrics;
    this.scans.inc();
    this.rerender();
  }

  /** Every metric this agent can export (node metrics included before their first reading), for docs/metrics.md. */
  async describe(): Promise<MetricDescription[]> {
    const own = (await this.registry.getMetricsAsJSON()).map((m) => ({
      name: m.name,
      type: String(m.type),
      help: m.help,
      labels: [...((this.registry.getSingleMetric(m.name) as { labelNames?: string[] }).labelNames ?? [])],
      stability: metricStability(m.name),
    }));
    // Imported here: node-values.ts brings the report schemas, rules and views, which the serving
    // thread otherwise never needs (the scan thread renders the node metrics).
    const { NODE_METRICS } = await import("./node-values.js");
    const node = Object.entries(NODE_METRICS).map(([name, d]) => ({
      name,
      type: "type" in d ? d.type : "gauge",
      help: d.help,
      labels: [...d.labels],
      stability: metricStability(name),
    }));
    const seen = new Set(own.map((m) => m.name));
    return [...own, ...node.filter((m) => !seen.has(m.name))];
  }

  recordScanFailure(): void {
    this.failures.inc();
    this.rerender();
  }

  /** The scan thread gave its heap's garbage back (after the scan it followed was recorded). */
  recordHeapRelease(freedBytes: number): void {
    this.heapReleases.inc();
    this.heapReleasedBytes.inc(freedBytes);
    this.rerender();
  }

  recordOverrun(): void {
    this.overruns.inc();
    this.rerender();
  }

  contentType(): string {
    return this.registry.contentType;
  }

  /** The body of the last render (process_* as of the last scan or overrun). */
  exposition(): Promise<string> {
    return this.body.then((b) => b.toString("utf8"));
  }

  /** The same body as bytes: what /metrics sends. */
  expositionBytes(): Promise<Buffer> {
    return this.body;
  }

  /**
   * The same body gzipped, for a scraper that sends `Accept-Encoding: gzip` (Prometheus does):
   * compressed once per render, on the first such scrape, never per request.
   */
  expositionGzip(): Promise<Buffer> {
    this.gzipped ??= this.body.then((b) => gzip(b));
    return this.gzipped;
  }
}
