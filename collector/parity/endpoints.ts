import type { ApiEndpointSlice, SliceEndpoint } from "../report/cluster-facts.js";
import type { Held } from "./name.js";

const epText = (address: string, port: number) =>
  address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;

interface Usable {
  /** What kube-proxy programs on this node: the union of its cluster and local endpoints. */
  all: Set<string>;
  /** The same, narrowed by topology hints for this node (null when no hint applies). */
  topology: Set<string> | null;
  /** Ready endpoints of the port anywhere in the cluster. */
  readyAnywhere: string[];
}

/**
 * The endpoints kube-proxy programs for one Service port on one node, as pkg/proxy/topology.go
 * CategorizeEndpoints chooses them: ready ones (narrowed by zone or node hints when every endpoint
 * carries them and one is for this node), else serving-and-terminating ones; with Local traffic
 * policy only the node's own, and the cluster set not at all when no policy uses it.
 */
export function usableEndpoints(
  slices: readonly ApiEndpointSlice[],
  held: Held,
  node: string,
  zone: string | null,
): Usable {
  const eps: { text: string; e: SliceEndpoint }[] = [];
  const want = held.port.name ?? "";
  for (const s of slices) {
    if (s.addressType !== "IPv4" && s.addressType !== "IPv6") continue; // kube-proxy reads no other
    const p = s.ports.find(
      (p) => p.name === want && p.protocol.toUpperCase() === held.port.protocol.toUpperCase(),
    );
    if (!p || p.port === null) continue;
    for (const e of s.endpoints) eps.push({ text: epText(e.address, p.port), e });
  }
  const svc = held.svc;
  const external =
    held.port.nodePort !== null ||
    (svc.externalIPs ?? []).length > 0 ||
    (svc.loadBalancerIPs ?? []).length > 0;
  const iLocal = svc.internalTrafficPolicy === "Local";
  const eLocal = svc.externalTrafficPolicy === "Local";
  const usesCluster = !iLocal || (external && !eLocal);
  const usesLocal = iLocal || (eLocal && external);
  const pick = (filter: (e: SliceEndpoint) => boolean) => {
    const ready = eps.filter((x) => x.e.ready && filter(x.e));
    return (ready.length > 0 ? ready : eps.filter((x) => x.e.serving && x.e.terminating && filter(x.e))).map(
      (x) => x.text,
    );
  };
  const local = usesLocal ? pick((e) => e.nodeName === node) : [];
  const cluster = usesCluster ? pick(() => true) : [];
  const all = new Set([...cluster, ...local]);
  let topology: Set<string> | null = null;
  if (usesCluster) {
    const ready = eps.filter((x) => x.e.ready);
    const byNode = ready.length > 0 && ready.every((x) => x.e.forNodes !== null);
    const byZone = ready.length > 0 && ready.every((x) => x.e.forZones !== null);
    const hinted = byNode
      ? ready.filter((x) => x.e.forNodes!.includes(node))
      : byZone && zone !== null
        ? ready.filter((x) => x.e.forZones!.includes(zone))
        : [];
    if (hinted.length > 0) topology = new Set([...hinted.map((x) => x.text), ...local]);
  }
  return { all, topology, readyAnywhere: eps.filter((x) => x.e.ready).map((x) => x.text) };
}
