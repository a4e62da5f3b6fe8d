import type { ClusterFacts, SliceReads } from "../report/cluster-facts.js";
import type { FleetNode } from "../report/schema.js";
import { confirmNodeParity } from "./confirm.js";
import { nameNodeParity } from "./name.js";

/** A node's parity as the fleet keeps it: lost addresses named from the API, each flagged entry confirmed. */
export function withParityChecks(
  n: FleetNode,
  cluster: ClusterFacts | null,
  slices: SliceReads | undefined,
): FleetNode {
  if (n.parity == null) return n;
  const checks = confirmNodeParity(n.parity, {
    cluster,
    slices,
    node: n.node,
    zone: n.labels["topology.kubernetes.io/zone"] ?? null,
  });
  return { ...n, parity: { ...nameNodeParity(n.parity, cluster)!, checks } };
}
