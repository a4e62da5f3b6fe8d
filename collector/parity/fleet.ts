import type { FleetNode, FleetReport } from "../report/schema.js";
import type { ParityCheck } from "./schema.js";

// Parity in the fleet: the fleet-wide tally, and what the plan's canary step reads of the switched nodes.

export function fleetParity(nodes: readonly FleetNode[]): NonNullable<FleetReport["summary"]["parity"]> {
  const byState: Record<string, number> = {};
  let missingAfter = 0;
  let endpointsDiffer = 0;
  let same = 0;
  const nodesWithLost: string[] = [];
  for (const n of nodes) {
    if (n.outcome !== "ok") continue;
    const state = n.parity?.state ?? "unknown";
    byState[state] = (byState[state] ?? 0) + 1;
    const c = n.parity?.counts;
    if (!c) continue;
    missingAfter += c.missingAfter;
    endpointsDiffer += c.endpointsDiffer;
    same += c.same;
    if (c.missingAfter > 0) nodesWithLost.push(n.node);
  }
  const byVerdict: Record<string, number> = {};
  const nodesWithConfirmedLoss: string[] = [];
  for (const n of nodes) {
    if (n.outcome !== "ok") continue;
    const checks = n.parity?.checks ?? [];
    for (const c of checks) byVerdict[c.verdict] = (byVerdict[c.verdict] ?? 0) + 1;
    if (checks.some(isLoss)) nodesWithConfirmedLoss.push(n.node);
  }
  return { byState, nodesWithLost, missingAfter, endpointsDiffer, same, byVerdict, nodesWithConfirmedLoss };
}

const isLoss = (c: ParityCheck) => c.verdict === "confirmed-loss" || c.verdict === "real-loss";

/**
 * A node whose lost Services the API explains (every one deleted, or without endpoints) no longer
 * holds the next pool back; one the API could not check still does, and a real loss of endpoints does.
 */
function holdsBack(n: FleetNode): boolean {
  const p = n.parity;
  if (!p) return false;
  const checks = p.checks;
  const missing = p.counts?.missingAfter ?? 0;
  if (checks === undefined) return missing > 0;
  // Lost Services the API never judged (the agent's list is cut; Prometheus carries counts only) are unproven.
  if (missing > checks.filter((c) => c.agent === "missing-after").length) return true;
  return checks.some((c) => isLoss(c) || (c.agent === "missing-after" && c.verdict === "not-confirmed"));
}

/** What the canary step says about parity on the nodes that have switched. */
export function canaryParityNote(nodes: readonly FleetNode[]): { blocked: string[]; unproven: string[] } {
  const switched = nodes.filter((n) => n.outcome === "ok" && n.phase === "nftables");
  return {
    blocked: switched.filter(holdsBack).map((n) => n.node),
    unproven: switched.filter((n) => n.parity?.state !== "compared").map((n) => n.node),
  };
}
