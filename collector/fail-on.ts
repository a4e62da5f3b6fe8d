import { SEVERITIES, Verdict, type Severity } from "../agent/contract.js";
import type { FleetReport } from "./report/schema.js";

/** The one gap the user chose (static source, no kubeconfig): shown in the report, but not a failed read. */
export const API_NOT_ASKED = {
  what: "Kubernetes API",
  reason: "not asked (static source without a kubeconfig)",
} as const;

export const FAIL_ON_VALUES = [...SEVERITIES, ...Verdict.options, "unanswered"] as const;
export type FailOn = (typeof FAIL_ON_VALUES)[number];

/**
 * What in the report reaches --fail-on, in words (empty: nothing). A severity counts node and cluster
 * findings at or above it; a verdict counts nodes with exactly that verdict; "unanswered" counts
 * nodes without a usable report and cluster reads that failed.
 */
export function reasonsToFail(r: FleetReport, failOn: FailOn | null): string[] {
  if (failOn === null) return [];
  if ((SEVERITIES as readonly string[]).includes(failOn)) {
    const floor = SEVERITIES.indexOf(failOn as Severity);
    const at = (s: Severity) => SEVERITIES.indexOf(s) >= floor;
    return [
      ...r.clusterFindings.filter((f) => at(f.severity)).map((f) => `cluster: ${f.id} (${f.severity})`),
      ...r.nodes.flatMap((n) =>
        n.findings.filter((f) => at(f.severity)).map((f) => `${n.node}: ${f.id} (${f.severity})`),
      ),
    ];
  }
  // A cluster read that failed is unanswered too: the checks that needed it did not run.
  if (failOn === "unanswered")
    return [
      ...r.nodes.filter((n) => n.outcome !== "ok").map((n) => `${n.node}: ${n.outcome}`),
      ...r.cluster.gaps
        .filter(
          (g) =>
            !(r.source === "static" && g.what === API_NOT_ASKED.what && g.reason === API_NOT_ASKED.reason),
        )
        .map((g) => `cluster: ${g.what} not read`),
    ];
  return r.nodes.filter((n) => n.verdict === failOn).map((n) => `${n.node}: ${failOn}`);
}
