import type { ApiService, ClusterFacts } from "../report/cluster-facts.js";
import type { NodeParity } from "./schema.js";

// The agent names a lost address as it saw it ("10.96.0.20:80/TCP", "nodeport:30080/TCP") and a
// differing Service by kube-proxy's ServicePortName; these find the Service that holds them now.

export type Held = { svc: ApiService; port: ApiService["ports"][number] };

const ENTRY = /^(?:nodeport:(\d+)|\[?([^\]]+?)\]?:(\d+))\/(TCP|UDP|SCTP)$/;

/** The Service (and port) that holds a lost address now: ClusterIP, externalIP or LoadBalancer IP, or NodePort. */
export function serviceHolding(entry: string, services: readonly ApiService[]): Held | null {
  const m = ENTRY.exec(entry);
  if (!m) return null;
  const [, nodePort, ip, port, proto] = m;
  for (const svc of services) {
    const ips = [...svc.clusterIPs, ...(svc.externalIPs ?? []), ...(svc.loadBalancerIPs ?? [])];
    const p = svc.ports.find(
      (p) =>
        p.protocol.toUpperCase() === proto &&
        (nodePort !== undefined
          ? p.nodePort === Number(nodePort)
          : p.port === Number(port) && ips.includes(ip!)),
    );
    if (p) return { svc, port: p };
  }
  return null;
}

/** "ns/svc:port" (kube-proxy's ServicePortName) -> its parts; the port name is "" for an unnamed port. */
export function servicePortName(s: string): { namespace: string; name: string; port: string } | null {
  const m = /^([^/]+)\/([^:]+)(?::(.+))?$/.exec(s);
  return m ? { namespace: m[1]!, name: m[2]!, port: m[3] ?? "" } : null;
}

/** "10.96.0.20:80/TCP" or "nodeport:30080/TCP" -> "ns/name (10.96.0.20:80/TCP)" when a Service holds it. */
export function nameLost(entry: string, cluster: ClusterFacts | null): string {
  const held = cluster === null ? null : serviceHolding(entry, cluster.services);
  return held ? `${held.svc.namespace}/${held.svc.name} (${entry})` : entry;
}

export function nameNodeParity(
  p: NodeParity | null | undefined,
  cluster: ClusterFacts | null,
): NodeParity | null {
  if (p == null) return null;
  return {
    ...p,
    lost: p.lost.map((e) => nameLost(e, cluster)),
    ...(p.arpOnly !== undefined ? { arpOnly: p.arpOnly.map((e) => nameLost(e, cluster)) } : {}),
  };
}
