import type { VirtualServer } from "../facts/ipvs.js";
import type { NodeFacts, NodePortReach } from "../report/schema.js";
import { busyAddresses, nodePortDestinations, primaryAddresses, type NodeAddress } from "./not-counted.js";

type Address = NodePortReach & { read: true };
type Served = Pick<Address["addresses"][number], "served" | "why">;

const MAX_LISTED = 100;

// kube-proxy's own choice of addresses (pkg/proxy/util/nodeport_addresses.go): nodePortAddresses matching
// all (unset in ipvs/iptables mode, 0.0.0.0/0) means every local address; nftables mode defaults it to
// `primary` (pkg/proxy/nftables Backend.Init / cmd/kube-proxy server_linux.go platformApplyDefaults), which
// server.go turns into the Node object's primary IPv4/IPv6 /32 and /128.

function tcpPort(p: string): number | null {
  const m = /^TCP:(\d+)$/.exec(p);
  return m ? Number(m[1]) : null;
}

function lowest(ports: Iterable<number | null>): number | null {
  const list = [...ports].filter((p): p is number => p !== null).sort((a, b) => a - b);
  return list[0] ?? null;
}

function nftablesReach(
  f: NodeFacts,
): { of: (a: NodeAddress) => Served; nodePorts: number; connectPort: number | null } | string {
  const n = f.nftables;
  if (n === null) return "kube-proxy's nftables table not read";
  const familyOf = (a: NodeAddress) => (a.family === "inet" ? "ip" : "ip6");
  const of = (a: NodeAddress): Served => {
    const t = n.kubeProxy.find((x) => x.family === familyOf(a));
    if (t === undefined) return { served: false, why: `no table ${familyOf(a)} ${n.kubeProxyTableName}` };
    if (t.nodePortIPs === undefined)
      return { served: null, why: `${familyOf(a)} ${t.name} nodeport-ips not read` };
    if (t.nodePortIPs === null)
      return {
        served: true,
        why: "no nodeport-ips set: kube-proxy accepts NodePorts on every local address",
      };
    return t.nodePortIPs.includes(a.address)
      ? { served: true, why: "in kube-proxy's nodeport-ips set" }
      : { served: false, why: "not in kube-proxy's nodeport-ips set" };
  };
  const all = new Set(n.kubeProxy.flatMap((t) => t.nodePorts ?? []));
  const reachable = n.kubeProxy.flatMap((t) => t.nodePortsWithEndpoints ?? []);
  return { of, nodePorts: all.size, connectPort: lowest(reachable.map(tcpPort)) };
}

function ipvsReach(
  f: NodeFacts,
): { of: (a: NodeAddress) => Served; nodePorts: number; connectPort: number | null } | string {
  if (f.ipvs === null) return "the IPVS table not read";
  if (f.ipsets === null || f.ipsets.nodePorts == null) return "kube-proxy's KUBE-NODE-PORT-* ipsets not read";
  const ports = new Set(f.ipsets.nodePorts);
  // ipvs mode programs a virtual server per NodePort on each address it serves (proxier.go syncProxyRules nodeIPs).
  const byAddress = new Map<string, Set<string>>();
  for (const v of f.ipvs.virtualServers) {
    const key = `${v.protocol}:${v.port}`;
    if (v.address === null || !ports.has(key)) continue;
    const s = byAddress.get(v.address) ?? new Set<string>();
    s.add(key);
    byAddress.set(v.address, s);
  }
  const of = (a: NodeAddress): Served => {
    const n = byAddress.get(a.address)?.size ?? 0;
    if (n === ports.size) return { served: true, why: `a virtual server for each of its ${n} NodePorts` };
    return n === 0
      ? { served: false, why: "no NodePort virtual server on it" }
      : { served: false, why: `virtual servers for ${n} of ${ports.size} NodePorts` };
  };
  const withEndpoints = f.ipvs.virtualServers.filter(
    (v) => v.realServers > 0 && ports.has(`${v.protocol}:${v.port}`),
  );
  return {
    of,
    nodePorts: ports.size,
    connectPort: lowest(withEndpoints.map((v) => tcpPort(`${v.protocol}:${v.port}`))),
  };
}

/**
 * For each of the node's own addresses a NodePort client may use, whether kube-proxy's current rules accept
 * NodePort traffic on it: nftables mode's `nodeport-ips` set (its absence meaning every local address),
 * ipvs mode's NodePort virtual servers for the ports in its KUBE-NODE-PORT-* sets. The addresses of the pod
 * network, containers and a DNS cache are named and skipped, as nodeport-addresses-shrink skips them.
 */
export function nodePortReach(
  f: NodeFacts,
  mode: string | null,
  nodePortVirtualServers: readonly VirtualServer[],
): NodePortReach {
  if (mode !== "nftables" && mode !== "ipvs")
    return {
      read: false,
      why:
        mode === null
          ? "kube-proxy did not answer /proxyMode: whose NodePort rules to read is unknown"
          : `kube-proxy answers ${JSON.stringify(mode)}: only nftables and ipvs mode's NodePort rules are read`,
    };
  if (f.addresses === null) return { read: false, why: "the node's addresses not read" };
  const r = mode === "nftables" ? nftablesReach(f) : ipvsReach(f);
  if (typeof r === "string") return { read: false, why: r };
  const primaries = primaryAddresses(f.addresses);
  const d = nodePortDestinations(f.addresses, primaries, busyAddresses(nodePortVirtualServers));
  const skipped = d.notCounted.map((n) => ({ seen: `${n.address} (${n.interface})`, why: n.why }));
  const addresses: Address["addresses"] = [];
  for (const a of d.counted) {
    const primary = a.family === "inet" ? f.addresses.primary.ipv4 : f.addresses.primary.ipv6;
    // A family the node has no primary address in is one its cluster serves no NodePorts in.
    if (primary === null) {
      skipped.push({
        seen: `${a.address} (${a.interface})`,
        why: `no primary ${a.family === "inet" ? "IPv4" : "IPv6"} address: a single-stack node`,
      });
      continue;
    }
    addresses.push({ address: a.address, interface: a.interface, ...r.of(a) });
  }
  return {
    read: true,
    mode,
    nodePorts: r.nodePorts,
    connectPort: r.connectPort,
    addresses: addresses.slice(0, MAX_LISTED),
    skipped: skipped.slice(0, MAX_LISTED),
  };
}
