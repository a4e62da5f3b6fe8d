import type { NodeObservation } from "../../report/schema.js";

const STATUS = {
  same: "same",
  missing_after: "missingAfter",
  endpoints_differ: "endpointsDiffer",
  new_after: "newAfter",
  arp_only: "arpOnly",
} as const;

/**
 * Pure: a node's parity from its three gauges. No state series (an agent that predates parity, or whose
 * parity probe failed): null, "not reported", never zero. "compared" only with all four counts: a
 * partial set of series is not a reading, and a canary must not pass on it.
 */
export function parityFromSeries(
  states: readonly string[],
  services: readonly (readonly [string, number])[],
  snapshotAt: number | null,
  scannedAt: number,
): NodeObservation["parity"] {
  const current = [...new Set(states)];
  if (current.length !== 1) return null;
  const state = current[0]!;
  const snapshotAgeSeconds = snapshotAt === null ? null : Math.max(0, Math.round(scannedAt - snapshotAt));
  if (state !== "compared") return { state, snapshotAgeSeconds, counts: null, lost: [] };
  const counts: Partial<Record<(typeof STATUS)[keyof typeof STATUS], number>> = {};
  for (const [status, v] of services) {
    const key = STATUS[status as keyof typeof STATUS];
    if (key !== undefined && Number.isInteger(v) && v >= 0) counts[key] = v;
  }
  const { same, missingAfter, endpointsDiffer, newAfter, arpOnly } = counts;
  if (
    same === undefined ||
    missingAfter === undefined ||
    endpointsDiffer === undefined ||
    newAfter === undefined
  )
    return null;
  // Prometheus carries the counts, not the addresses: the lost list is the agent's /parity. arp_only comes
  // only from agents that know it; its absence is "not told", never 0.
  const base = { same, missingAfter, endpointsDiffer, newAfter };
  return {
    state,
    snapshotAgeSeconds,
    counts: arpOnly === undefined ? base : { ...base, arpOnly },
    lost: [],
  };
}
