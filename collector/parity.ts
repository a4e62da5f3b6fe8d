import type { ClusterFacts } from "./report/cluster-facts.js";
import type { FleetNode, FleetReport, NodeParity } from "./report/schema.js";

// #17 in the fleet: each node's parity after its switch, its lost addresses named from the API, and
// the fleet-wide tally the plan's canary step reads. Pure.

/** "10.96.0.20:80/TCP" or "nodeport:30080/TCP" -> "ns/name (10.96.0.20:80/TCP)" when a Service holds it. */
export function nameLost(entry: string, cluster: ClusterFacts | null): string {
  const m = /^(?:nodeport:(\d+)|\[?([^\]]+?)\]?:(\d+))\/(TCP|UDP|SCTP)$/.exec(entry);
  if (!m || cluster === null) return entry;
  const [, nodePort, ip, port, proto] = m;
  const svc = cluster.services.find((s) =>
    s.ports.some(
      (p) =>
        p.protocol.toUpperCase() === proto &&
        (nodePort !== undefined
          ? p.nodePort === Number(nodePort)
          : p.port === Number(port) && s.clusterIPs.includes(ip!)),
    ),
  );
  return svc ? `${svc.namespace}/${svc.name} (${entry})` : entry;
}

export function nameNodeParity(
  p: NodeParity | null | undefined,
  cluster: ClusterFacts | null,
): NodeParity | null {
  if (p == null) return null;
  return { ...p, lost: p.lost.map((e) => nameLost(e, cluster)) };
}

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
  return { byState, nodesWithLost, missingAfter, endpointsDiffer, same };
}

/** What the canary step says about parity on the nodes that have switched. */
export function canaryParityNote(nodes: readonly FleetNode[]): { blocked: string[]; unproven: string[] } {
  const switched = nodes.filter((n) => n.outcome === "ok" && n.phase === "nftables");
  return {
    blocked: switched.filter((n) => (n.parity?.counts?.missingAfter ?? 0) > 0).map((n) => n.node),
    unproven: switched.filter((n) => n.parity?.state !== "compared").map((n) => n.node),
  };
}
