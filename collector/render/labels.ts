import { API_NOT_ASKED } from "../report/fail-on.js";
import type { FleetNode, FleetReport } from "../report/schema.js";

/** A newer agent's finding, verify line or fact shape this collector does not know. */
export const UNKNOWN_TO_COLLECTOR = "unknown to this collector (agent newer)";

export function nodeNote(n: FleetNode): string {
  if (n.outcome !== "ok") return `${n.outcome}: ${n.reason ?? ""}`;
  const parts: string[] = [];
  if (n.listedByApi === false) parts.push("not listed by the API");
  if (n.reason) parts.push(n.reason);
  if (n.failedProbes.length > 0) parts.push(`failed probes: ${n.failedProbes.join(", ")}`);
  if (n.unknownToCollector?.length) parts.push(`${UNKNOWN_TO_COLLECTOR}: ${n.unknownToCollector.join(", ")}`);
  return parts.join("; ");
}

const RANK = { critical: 0, error: 1, warning: 2, info: 3 } as const;

/** A finding's id, marked when --accept-file accepted it: every format shows it, none hides it. */
const findingLabel = (f: { id: string; accepted?: unknown }) => (f.accepted ? `${f.id} (accepted)` : f.id);

export function worstFindings(n: FleetNode, max = 3): string {
  const ids = [...n.findings].sort((a, b) => RANK[a.severity] - RANK[b.severity]).map(findingLabel);
  return ids.length > max ? `${ids.slice(0, max).join(", ")} +${ids.length - max}` : ids.join(", ");
}

export function phaseOf(n: FleetNode): string {
  return n.phase ?? "no-report";
}
export function verdictOf(n: FleetNode): string {
  return n.verdict ?? "no-report";
}

/**
 * The configured mode in a word or three. "not pinned" only when the source kube-proxy reads was read
 * and names no mode; unread or outside the API says so (unread is never absent).
 */
export function configuredModeLabel(cl: FleetReport["cluster"]): string {
  if (cl.configuredMode) return cl.configuredMode;
  const unread = clusterUnread(cl);
  if (unread) return unread;
  const src = cl.configSource;
  // A report of an older collector has no configSource: it said "not pinned" then, unverified.
  if (!src) return "not pinned";
  if (src.pin === "not-pinned") return "not pinned";
  if (src.pin === "distribution") return `set by ${src.distribution} (not in the API)`;
  if (src.kind === "none") return "no kube-proxy seen";
  return "unknown (not read)";
}

/**
 * Why the cluster's facts (mode, Services, kubeadm) were never read, or null when they were: the rollup
 * writes configSource null exactly when it had no cluster facts (an older report leaves it out).
 */
export function clusterUnread(cl: FleetReport["cluster"]): string | null {
  if (cl.configSource !== null) return null;
  const asked = cl.gaps.find((g) => g.what === API_NOT_ASKED.what);
  return asked?.reason === API_NOT_ASKED.reason
    ? "not read (no API access with --source static)"
    : `not read (${asked?.reason ?? "no cluster facts"})`;
}

/** Where kube-proxy's mode comes from, in words (the cluster-config-source finding's title). */
export function configSourceLabel(cl: FleetReport["cluster"]): string {
  return (
    cl.configSource?.where ??
    clusterUnread(cl) ??
    (cl.kubeadm ? "kubeadm (ConfigMap regenerated on upgrade)" : cl.kubeProxyConfigMap ? "ConfigMap" : "-")
  );
}
