import { NodeMetrics } from "../metrics/node-metrics.js";
import { fleetDigestOf } from "../view/fleet-digest.js";
import type { NodeReport } from "../report/schema.js";
import { risingCounters, type RisingCounter } from "./rising.js";
import { reportSummary } from "./summary.js";

/** What the serving thread keeps of a report besides its bodies: the scan log line's fields. */
export interface ScanMeta {
  node: string;
  scannedAt: string;
  phase: NodeReport["phase"];
  verdict: NodeReport["verdict"];
  findings: number;
  failedProbes: { name: string; kind?: string; command?: string; message?: string }[];
  durationMs: number;
  risingCounters: RisingCounter[];
}

/** /parity's answer: the parity facts as JSON, or why they were not read. */
export type ParityBody = { ok: true; json: Uint8Array } | { ok: false; message: string };

/**
 * One scan as the serving thread receives it: every body already UTF-8, rendered once on the scan
 * thread, and a few plain fields. Never the report object: cloning it (and serialising it again) on
 * the serving thread blocked it for hundreds of milliseconds at 1,000 Services.
 */
export interface RenderedScan {
  /** /report: the NodeReport as JSON (the same schema as `scan --json`). */
  report: Uint8Array;
  /** /report/summary. */
  summary: Uint8Array;
  /** /report/fleet: the FleetDigest the collector reads instead of the whole report. */
  fleet: Uint8Array;
  parity: ParityBody;
  /** The node-level part of /metrics (NodeMetrics), joined to the agent's own at render. */
  metrics: Uint8Array;
  meta: ScanMeta;
}

// TextEncoder gives each body an ArrayBuffer of its own (Buffer.from may slice a shared pool, which
// could not be transferred).
const encoder = new TextEncoder();
const utf8 = (s: string) => encoder.encode(s);

/** Renders every body of a report, once; `previous` is the scan before it (for rising counters). */
export async function renderScan(
  report: NodeReport,
  previous: NodeReport | null = null,
  metrics: NodeMetrics = new NodeMetrics(),
): Promise<RenderedScan> {
  const p = report.facts.parity;
  const parityProbe = report.probes.find((x) => x.name === "parity");
  return {
    report: utf8(JSON.stringify(report)),
    summary: utf8(JSON.stringify(reportSummary(report))),
    fleet: utf8(JSON.stringify(fleetDigestOf(report))),
    parity:
      p === null
        ? { ok: false, message: `parity not read: ${parityProbe?.error?.message ?? "the probe did not run"}` }
        : { ok: true, json: utf8(JSON.stringify(p)) },
    metrics: utf8(await metrics.render(report)),
    meta: {
      node: report.node,
      scannedAt: report.scannedAt,
      phase: report.phase,
      verdict: report.verdict,
      findings: report.findings.length,
      failedProbes: report.probes
        .filter((x) => !x.ok)
        .map((x) => ({
          name: x.name,
          kind: x.error?.kind,
          command: x.error?.command,
          message: x.error?.message,
        })),
      durationMs: report.scanDurationMs,
      risingCounters: risingCounters(previous, report),
    },
  };
}

/**
 * The buffers to move rather than copy when posting a rendered scan: each is made for this one post
 * and never read on the scan thread after it.
 */
export function transferList(r: RenderedScan): ArrayBuffer[] {
  const all = [r.report, r.summary, r.fleet, r.metrics, ...(r.parity.ok ? [r.parity.json] : [])];
  return all.map((b) => b.buffer as ArrayBuffer);
}
