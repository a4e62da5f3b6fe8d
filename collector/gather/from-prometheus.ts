import { STALE_AFTER_S } from "../sources/agents.js";
import { gatherBurnDown, gatherFromPrometheus } from "../sources/prometheus.js";
import type { GatherConfig, Observed } from "./types.js";

/** Four weeks every six hours: a review's horizon, within Prometheus's default 15 days it shows what it holds. */
const BURN_DOWN_RANGE_S = 28 * 86400;
const BURN_DOWN_STEP_S = 6 * 3600;

function promOpts(cfg: GatherConfig, leftMs: number) {
  return {
    url: cfg.prometheusUrl!,
    nodeLabel: cfg.prometheusNodeLabel,
    timeoutMs: Math.max(1, Math.floor(leftMs)),
    maxBytes: 64 * 1024 * 1024,
    staleAfterS: STALE_AFTER_S,
    now: () => Date.now() / 1000,
  };
}

/**
 * --source prometheus: the nodes from the agents' gauges, then the burn-down. The queries and the
 * burn-down share the gather's one deadline (`leftMs`; --timeout-ms is per API call).
 */
export async function fromPrometheus(
  cfg: GatherConfig,
  leftMs: () => number,
  deadlineMs: number,
): Promise<Observed> {
  if (!cfg.prometheusUrl)
    return { ok: false, error: "--source prometheus needs --prometheus-url", usage: true };
  const p = await gatherFromPrometheus(promOpts(cfg, leftMs()));
  if (!p.ok) return p;
  // The burn-down: a history that cannot be read is named on the page, and the report stands.
  const left = leftMs();
  const h =
    left > 0
      ? await gatherBurnDown(promOpts(cfg, left), BURN_DOWN_RANGE_S, BURN_DOWN_STEP_S)
      : { ok: false as const, error: `not read: the gather's ${deadlineMs} ms deadline had passed` };
  return {
    ok: true,
    observations: p.value,
    history: h.ok ? { history: h.value } : { historyError: h.error },
  };
}
