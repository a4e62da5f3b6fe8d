// The "new floor": the cheapest set of kernel reads that answers every question the
// report asks, chosen from what each read costs (bench/results/nft-reads.md, nft-calls-10000.md), not
// a replay of the calls the scan happens to make. Each read says which question only it answers; the
// benchmark times each one under /usr/bin/time in the node's namespace and sums them.

export interface FloorRead {
  argv: string[];
  why: string;
}

const KUBE_PROXY_NFT: [kind: "set" | "map", name: string][] = [
  ["set", "cluster-ips"],
  ["set", "nodeport-ips"],
  ["map", "service-ips"],
  ["map", "service-nodeports"],
  ["map", "no-endpoint-services"],
  ["map", "no-endpoint-nodeports"],
  ["map", "firewall-ips"],
];

// Both modes: the addresses, default routes and the other netfilter backends a finding may not skip
// (leftovers of another mode, kubelet's chains, the other table owners on the node).
const COMMON: FloorRead[] = [
  { argv: ["ip", "-j", "-d", "addr", "show"], why: "node addresses; kube-ipvs0 and what is bound to it" },
  { argv: ["ip", "-j", "route", "show", "default"], why: "the node's default route (node IP)" },
  { argv: ["ip", "-j", "-6", "route", "show", "default"], why: "IPv6 default route (dual-stack)" },
  { argv: ["iptables-legacy-save"], why: "legacy KUBE-* chains: iptables/ipvs-mode state or leftovers" },
  { argv: ["ip6tables-legacy-save"], why: "the same for IPv6" },
  { argv: ["iptables-nft-save"], why: "kubelet's and other owners' iptables-nft rules, KUBE-* leftovers" },
  { argv: ["ip6tables-nft-save"], why: "the same for IPv6" },
  { argv: ["cat", "/proc/modules"], why: "ip_vs / nf_tables modules loaded" },
];

/**
 * nftables mode. On nft 1.0.6 `list chains` is the one read short of the full cache that names every
 * table and base chain (hook, priority, policy); `list tables` and `list chain <one>` build the full
 * cache there. Named sets' and maps' declarations come with `-t` (no elements: ~0.1 s), and
 * kube-proxy's seven named sets and maps one by one (their elements are the Services).
 */
export function nftFloor(): FloorRead[] {
  return [
    { argv: ["nft", "-j", "list", "chains"], why: "every table and base chain with its hook and priority" },
    { argv: ["nft", "-j", "-t", "list", "sets"], why: "named sets of every table, declarations only" },
    { argv: ["nft", "-j", "-t", "list", "maps"], why: "named maps of every table, declarations only" },
    ...KUBE_PROXY_NFT.map(([kind, name]) => ({
      argv: ["nft", "-j", "list", kind, "ip", "kube-proxy", name],
      why: `kube-proxy's ${name}: its elements are what the Services program`,
    })),
    { argv: ["ipset", "list", "-terse"], why: "ipvs/iptables-mode ipsets left over (names and sizes)" },
    { argv: ["cat", "/proc/net/ip_vs"], why: "IPVS virtual servers left over" },
    ...COMMON,
  ];
}

/** ipvs mode: the IPVS table itself, plus the reads no finding can do without. */
export function ipvsFloor(): FloorRead[] {
  return [
    { argv: ["cat", "/proc/net/ip_vs"], why: "every virtual and real server (the reference read)" },
    { argv: ["ipvsadm", "-L", "--timeout"], why: "IPVS tcp/tcpfin/udp timeouts (not in /proc)" },
    { argv: ["ipset", "list", "-terse"], why: "kube-proxy's ipsets exist and their sizes (no entries)" },
    { argv: ["nft", "-j", "list", "chains"], why: "nftables tables and base chains (leftovers, owners)" },
    ...COMMON,
  ];
}

/** The single read the ipvs floor is compared against ("near `cat /proc/net/ip_vs`"). */
export const IPVS_REFERENCE = ["cat", "/proc/net/ip_vs"];
