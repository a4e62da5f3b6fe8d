import type { AgentMetrics } from "../metrics/agent-metrics.js";
import type { ParityBody, RenderedScan, ScanMeta } from "./rendered-scan.js";

export interface ScanRecord {
  meta: ScanMeta;
  /** /report's body, rendered once per scan on the scan thread: a request never pays for it. */
  json: Buffer;
  /** The public summary (/report/summary), rendered once per scan too. */
  summaryJson: Buffer;
  /** The FleetDigest (/report/fleet), rendered once per scan too. */
  fleetJson: Buffer;
  parity: { ok: true; json: Buffer } | { ok: false; message: string };
  completedAtMs: number;
}

// A view of the bytes received, not a copy.
const bytes = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);
const parityOf = (p: ParityBody): ScanRecord["parity"] => (p.ok ? { ok: true, json: bytes(p.json) } : p);

/** What the server serves: the last completed scan, the one before it (to tell rising counters), and the metrics. */
export class AgentState {
  current: ScanRecord | null = null;
  previous: ScanRecord | null = null;

  constructor(
    readonly metrics: AgentMetrics,
    private readonly now: () => number = Date.now,
  ) {}

  /** A scan's finished bodies replace the last; nothing here parses or serialises a report. */
  record(scan: RenderedScan): ScanRecord {
    this.previous = this.current;
    this.current = {
      meta: scan.meta,
      json: bytes(scan.report),
      summaryJson: bytes(scan.summary),
      fleetJson: bytes(scan.fleet),
      parity: parityOf(scan.parity),
      completedAtMs: this.now(),
    };
    this.metrics.recordScan(scan.metrics);
    return this.current;
  }

  ageSeconds(r: ScanRecord): number {
    return Math.max(0, (this.now() - r.completedAtMs) / 1000);
  }

  get ready(): boolean {
    return this.current !== null;
  }
}
