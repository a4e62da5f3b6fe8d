import type { AgentMetrics } from "../metrics/agent-metrics.js";
import type { NodeReport } from "../report/schema.js";
import { reportSummary } from "./summary.js";

export interface ScanRecord {
  report: NodeReport;
  /** Serialised once per scan: a request never pays for it and never triggers a scan. */
  json: string;
  /** The public summary (/report/summary), serialised once per scan too. */
  summaryJson: string;
  completedAtMs: number;
}

/** What the server serves: the last completed scan, the one before it (to tell rising counters), and the metrics. */
export class AgentState {
  current: ScanRecord | null = null;
  previous: ScanRecord | null = null;

  constructor(
    readonly metrics: AgentMetrics,
    private readonly now: () => number = Date.now,
  ) {}

  record(report: NodeReport): ScanRecord {
    this.previous = this.current;
    this.current = {
      report,
      json: JSON.stringify(report),
      summaryJson: JSON.stringify(reportSummary(report)),
      completedAtMs: this.now(),
    };
    this.metrics.recordScan(report);
    return this.current;
  }

  ageSeconds(r: ScanRecord): number {
    return Math.max(0, (this.now() - r.completedAtMs) / 1000);
  }

  get ready(): boolean {
    return this.current !== null;
  }
}
