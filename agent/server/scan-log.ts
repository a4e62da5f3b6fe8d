import type { Logger } from "pino";
import type { ScanMeta } from "./rendered-scan.js";

/** One info line per scan, and one warn line per failed probe, so a failure is findable by probe name. */
export function logScan(log: Logger, scan: ScanMeta): void {
  for (const p of scan.failedProbes) {
    log.warn({ probe: p.name, kind: p.kind, command: p.command, error: p.message }, "probe failed");
  }
  log.info(
    {
      phase: scan.phase,
      verdict: scan.verdict,
      findings: scan.findings,
      failedProbes: scan.failedProbes.map((p) => p.name),
      durationMs: scan.durationMs,
      ...(scan.risingCounters.length > 0 ? { risingCounters: scan.risingCounters } : {}),
    },
    "scan complete",
  );
}
