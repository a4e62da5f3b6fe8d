import type { Logger } from "pino";
import type { NodeReport } from "../report/schema.js";
import type { RisingCounter } from "./rising.js";

/** One info line per scan, and one warn line per failed probe, so a failure is findable by probe name. */
export function logScan(log: Logger, report: NodeReport, rising: readonly RisingCounter[]): void {
  const failed = report.probes.filter((p) => !p.ok);
  for (const p of failed) {
    log.warn(
      { probe: p.name, kind: p.error?.kind, command: p.error?.command, error: p.error?.message },
      "probe failed",
    );
  }
  log.info(
    {
      phase: report.phase,
      verdict: report.verdict,
      findings: report.findings.length,
      failedProbes: failed.map((p) => p.name),
      durationMs: report.scanDurationMs,
      ...(rising.length > 0 ? { risingCounters: rising } : {}),
    },
    "scan complete",
  );
}
