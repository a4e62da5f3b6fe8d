import type { FleetNode, NodeFinding } from "../../report/schema.js";

// The probes each finding's rule needs (agent/rules/before/*.ts `needs`): one failed, the rule said nothing.
const NEEDS: Record<string, readonly string[]> = {
  "nodeport-addresses-shrink": ["addresses", "configz", "ipvs", "kubeIpvs0", "ipsets"],
  "health-check-nodeports-shrink": ["listeners", "configz", "addresses", "ipsets"],
  "service-ips-answered-by-arp": ["addresses", "sysctls", "kubeIpvs0", "ipvs"],
  "ipvs-connections-cut-at-switch": ["ipvsConnections", "ipvs", "kubeIpvs0", "addresses"],
  "ipvs-scheduler-not-rr": ["configz", "ipvs", "kubeIpvs0", "addresses"],
  "etp-local-in-cluster-callers": ["serviceConntrack"],
  "service-ips-host-ports-close": ["kubeIpvs0"],
};

/** Per node: the finding, or why the node cannot say (no report, probe not read), or null (not there). */
export type Seen = { node: string; finding: NodeFinding } | { node: string; unknown: string };

/** Whether the switch is ahead of a node: it runs ipvs, or why that is not known; null: it does not. */
export function onIpvs(n: FleetNode): { unknown: string } | "ipvs" | null {
  if (n.outcome !== "ok") return { unknown: `no usable report (${n.outcome})` };
  if (n.phase === null || n.phase === "unknown") return { unknown: "its mode is not known" };
  return n.phase === "ipvs" ? "ipvs" : null; // the change is behind it, or it never ran ipvs
}

export function seenOn(
  nodes: readonly FleetNode[],
  id: string,
  needsEvidence: boolean,
  source: string,
): Seen[] {
  const out: Seen[] = [];
  for (const n of nodes) {
    const on = onIpvs(n);
    if (on === null) continue;
    if (on !== "ipvs") {
      out.push({ node: n.node, unknown: on.unknown });
      continue;
    }
    const f = n.findings.find((x) => x.id === id);
    if (f) {
      if (needsEvidence && f.evidence === undefined)
        out.push({ node: n.node, unknown: `${id} fired but --source ${source} carries no evidence` });
      else out.push({ node: n.node, finding: f });
      continue;
    }
    const failed = (NEEDS[id] ?? []).filter((p) => n.failedProbes.includes(p));
    if (failed.length > 0) out.push({ node: n.node, unknown: `${failed.join(", ")} not read` });
  }
  return out;
}
