import type { fleetMetrics } from "../render/fleet-metrics.js";
import type { GatherResult } from "../gather/gather.js";
import { renderHtml } from "../render/html.js";
import type { FleetReport } from "../report/schema.js";

/** The last good report (and its page, rendered once per gather) and why the last gather failed, if it did. */
export interface LatestReport {
  latest: { report: FleetReport; html: string } | null;
  lastError: string | null;
}

/**
 * One gather at a time: a cycle that finds the previous one still running does nothing, so a slow
 * fleet never has two gathers in flight. A failed gather keeps the last good report.
 */
export function gatherCycle(
  state: LatestReport,
  gather: () => Promise<GatherResult>,
  metrics: ReturnType<typeof fleetMetrics>,
  log: (line: string) => void,
): () => Promise<void> {
  let running = false;
  return async function cycle() {
    if (running) return;
    running = true;
    const t0 = performance.now();
    try {
      const r = await gather();
      const secs = (performance.now() - t0) / 1000;
      if (r.ok) {
        state.latest = { report: r.report, html: renderHtml(r.report) };
        state.lastError = null;
        metrics.update(r.report, secs);
        log(
          `gathered ${r.report.summary.nodes} nodes (${r.report.summary.unanswered} without a report) in ${secs.toFixed(1)} s`,
        );
      } else {
        state.lastError = r.error;
        metrics.failed(secs);
        log(`gather failed: ${r.error}`);
      }
    } finally {
      running = false;
    }
  };
}
