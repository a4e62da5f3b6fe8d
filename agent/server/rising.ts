import type { NodeReport } from "../report/schema.js";
import { counterValue, readCounter } from "../view/counters.js";
import { runningModeOf } from "../view/phase.js";

export interface RisingCounter {
  name: string;
  previous: number;
  current: number;
}

/**
 * kube-proxy counters that grew between two scans: a failure counter that is merely non-zero may be
 * an old failure, one that rises is failing now. Counters that do not apply in the current mode, or
 * were not read in either scan, are never reported as rising.
 */
export function risingCounters(previous: NodeReport | null, current: NodeReport): RisingCounter[] {
  if (previous === null) return [];
  const mode = runningModeOf(current.facts);
  const prevMode = runningModeOf(previous.facts);
  // A restart into another mode resets every counter; comparing across it says nothing.
  if (mode === null || mode !== prevMode) return [];
  const names = Object.keys(current.facts.kubeProxyMetrics?.metrics ?? {}).filter((n) =>
    n.endsWith("_total"),
  );
  const out: RisingCounter[] = [];
  for (const name of names.sort()) {
    const now = counterValue(readCounter(current.facts, mode, name));
    const before = counterValue(readCounter(previous.facts, mode, name));
    if (now !== null && before !== null && now > before) out.push({ name, previous: before, current: now });
  }
  return out;
}
