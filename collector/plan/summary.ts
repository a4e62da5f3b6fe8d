import { Phase, SEVERITIES, Verdict } from "../../agent/contract.js";
import { fleetParity } from "../parity/fleet.js";
import { NodeOutcome, type FleetNode, type FleetReport } from "../report/schema.js";
import type { ClusterFinding } from "../rules/index.js";

function tally<K extends string>(keys: readonly K[], values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(keys.map((k) => [k, 0]));
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/** The fleet's counts: nodes by answer, phase, verdict and outcome, findings by severity, and parity. */
export function fleetSummary(
  nodes: readonly FleetNode[],
  clusterFindings: readonly ClusterFinding[],
): FleetReport["summary"] {
  const answered = nodes.filter((n) => n.outcome === "ok").length;
  const severities = [
    ...clusterFindings.map((f) => f.severity),
    ...nodes.flatMap((n) => n.findings.map((f) => f.severity)),
  ];
  return {
    nodes: nodes.length,
    answered,
    unanswered: nodes.length - answered,
    notListedByApi: nodes.filter((n) => n.listedByApi === false).length,
    byPhase: tally(
      [...Phase.options, "no-report"],
      nodes.map((n) => n.phase ?? "no-report"),
    ),
    byVerdict: tally(
      [...Verdict.options, "no-report"],
      nodes.map((n) => n.verdict ?? "no-report"),
    ),
    byOutcome: tally(
      NodeOutcome.options,
      nodes.map((n) => n.outcome),
    ),
    bySeverity: tally(SEVERITIES, severities),
    parity: fleetParity(nodes),
  };
}
