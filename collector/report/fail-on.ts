import { breaksNow, SEVERITIES, Verdict, type Finding, type Severity } from "../../agent/contract.js";
import type { FleetNode, FleetReport } from "./schema.js";

/** The one gap the user chose (static source, no kubeconfig): shown in the report, but not a failed read. */
export const API_NOT_ASKED = {
  what: "Kubernetes API",
  reason: "not asked (static source without a kubeconfig)",
} as const;

export const FAIL_ON_VALUES = [...SEVERITIES, ...Verdict.options, "unanswered"] as const;
export type FailOn = (typeof FAIL_ON_VALUES)[number];

const isGap = (r: FleetReport, g: FleetReport["cluster"]["gaps"][number]) =>
  !(r.source === "static" && g.what === API_NOT_ASKED.what && g.reason === API_NOT_ASKED.reason);

const atOrAbove = (failOn: FailOn) => {
  const floor = SEVERITIES.indexOf(failOn as Severity);
  return (s: Severity) => SEVERITIES.indexOf(s) >= floor;
};
const isSeverity = (f: FailOn): f is Severity => (SEVERITIES as readonly string[]).includes(f);

// The findings that gave a node its verdict, all accepted by the team: the node does not fail CI for it.
const onlyAccepted = (n: FleetNode, gives: (f: FleetNode["findings"][number]) => boolean) => {
  const causes = n.findings.filter(gives);
  return causes.length > 0 && causes.every((f) => f.accepted);
};

/** What of one node reaches --fail-on, in words (empty: nothing): the renderers' per-node verdict. */
export function nodeReasons(n: FleetNode, failOn: FailOn | null): string[] {
  if (failOn === null) return [];
  if (isSeverity(failOn)) {
    const at = atOrAbove(failOn);
    // An accepted finding is shown, not counted (--accept-file).
    return n.findings
      .filter((f) => at(f.severity) && !f.accepted)
      .map((f) => `${n.node}: ${f.id} (${f.severity})`);
  }
  if (failOn === "unanswered") return n.outcome !== "ok" ? [`${n.node}: ${n.outcome}`] : [];
  // A node blocked or broken only by findings the team accepted does not count (the verdict shown stays the agent's).
  if (failOn === "blocked" && n.verdict === "blocked" && onlyAccepted(n, (f) => f.blocksMigration === true))
    return [];
  if (failOn === "unhealthy" && n.verdict === "unhealthy" && onlyAccepted(n, breaksNow)) return [];
  return n.verdict === failOn ? [`${n.node}: ${failOn}`] : [];
}

/** Whether one cluster finding reaches --fail-on (only a severity can). */
export function clusterFindingReaches(
  f: Pick<Finding, "severity"> & { accepted?: unknown },
  failOn: FailOn | null,
): boolean {
  return failOn !== null && isSeverity(failOn) && atOrAbove(failOn)(f.severity) && !f.accepted;
}

/** The cluster reads that failed (the API not asked, by choice, is not one). */
export function clusterGaps(r: FleetReport): FleetReport["cluster"]["gaps"] {
  return r.cluster.gaps.filter((g) => isGap(r, g));
}

/**
 * What in the report reaches --fail-on, in words (empty: nothing). A severity counts node and cluster
 * findings at or above it; a verdict counts nodes with exactly that verdict; "unanswered" counts
 * nodes without a usable report and cluster reads that failed.
 */
export function reasonsToFail(r: FleetReport, failOn: FailOn | null): string[] {
  if (failOn === null) return [];
  // A cluster read that failed is unanswered too: the checks that needed it did not run.
  const cluster =
    failOn === "unanswered"
      ? clusterGaps(r).map((g) => `cluster: ${g.what} not read`)
      : r.clusterFindings
          .filter((f) => clusterFindingReaches(f, failOn))
          .map((f) => `cluster: ${f.id} (${f.severity})`);
  const nodes = r.nodes.flatMap((n) => nodeReasons(n, failOn));
  return failOn === "unanswered" ? [...nodes, ...cluster] : [...cluster, ...nodes];
}
