import { STALE_AFTER_S } from "../sources/agents.js";
import { gatherBurnDown, gatherFromPrometheus } from "../sources/prometheus.js";
import { DEFAULT_GATHER_DEADLINE_MS, type GatherConfig, type Observed } from "./types.js";

/** Four weeks every six hours: a review's horizon, within Prometheus's default 15 days it shows what it holds. */
export const BURN_DOWN_RANGE_S = 28 * 86400;
export const BURN_DOWN_STEP_S = 6 * 3600;

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
 * --source prometheus: the nodes from the agents' gauges and the burn-down's range query, sent at once
 * under the gather's one deadline (--timeout-ms is per API call). Neither needs anything from the API,
 * so gather() starts this before it reads the API and waits for the longest of the three, not their sum
 * (bench/growth's Prometheus row: 1.75 s -> 1.37 s at 5,000 nodes against a 1.07 s floor).
 */
export async function fromPrometheus(cfg: GatherConfig, deadlineMs: number): Promise<Observed> {
  if (!cfg.prometheusUrl)
    return { ok: false, error: "--source prometheus needs --prometheus-url", usage: true };
  const [p, h] = await Promise.all([
    gatherFromPrometheus(promOpts(cfg, deadlineMs)),
    gatherBurnDown(promOpts(cfg, deadlineMs), BURN_DOWN_RANGE_S, BURN_DOWN_STEP_S),
  ]);
  if (!p.ok) return p;
  // The burn-down: a history that cannot be read is named on the page, and the report stands.
  return {
    ok: true,
    observations: p.value,
    history: h.ok ? { history: h.value } : { historyError: h.error },
  };
}

const started = new WeakMap<GatherConfig, Promise<Observed>>();

/**
 * A gather's Prometheus queries, started ahead of it: the CLI starts them before the report's own
 * modules load, so that part of Node's start (~0.25 s) runs while Prometheus evaluates, not before the
 * first query leaves; the gather then takes the same promise (takePrometheus). Started again for the
 * same config before it is taken, the same promise. null: this gather asks no Prometheus (a demo,
 * saved reports, another source).
 */
export function startPrometheus(cfg: GatherConfig): Promise<Observed> | null {
  const saved = cfg.demo === true || (cfg.fromFiles?.length ?? 0) > 0;
  if (saved || cfg.source !== "prometheus") return null;
  let p = started.get(cfg);
  if (!p) {
    p = fromPrometheus(cfg, cfg.gatherDeadlineMs ?? DEFAULT_GATHER_DEADLINE_MS);
    // Its Result says how it failed; a throw is a bug, which gather's await still meets.
    void p.catch(() => undefined);
    started.set(cfg, p);
  }
  return p;
}

/**
 * The gather's own queries: the ones started ahead for this config, or new ones; either way no longer
 * held, so the next gather of the same config (serve's, every interval) asks Prometheus afresh.
 */
export function takePrometheus(cfg: GatherConfig): Promise<Observed> | null {
  const p = startPrometheus(cfg);
  started.delete(cfg);
  return p;
}
