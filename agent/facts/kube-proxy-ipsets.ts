// The ipsets kube-proxy's ipvs mode creates: `ipsetInfo` in kubernetes/kubernetes
// pkg/proxy/ipvs/proxier.go, names from pkg/proxy/ipvs/ipset.go. The IPv6 proxier renames each
// "KUBE-" to "KUBE-6-" and cuts the result to ipset's 31 characters (NewIPSet), so two IPv6 names
// are truncated: KUBE-6-LOAD-BALANCER-SOURCE-CID and KUBE-6-NODE-PORT-LOCAL-SCTP-HAS.

export interface KubeProxyIpset {
  name: string;
  type: string;
  /** Only created by older kube-proxy versions; still found on nodes upgraded since. */
  legacy?: true;
}

export const KUBE_PROXY_IPSETS: readonly KubeProxyIpset[] = [
  { name: "KUBE-LOOP-BACK", type: "hash:ip,port,ip" },
  { name: "KUBE-CLUSTER-IP", type: "hash:ip,port" },
  { name: "KUBE-EXTERNAL-IP", type: "hash:ip,port" },
  { name: "KUBE-EXTERNAL-IP-LOCAL", type: "hash:ip,port" },
  { name: "KUBE-LOAD-BALANCER", type: "hash:ip,port" },
  { name: "KUBE-LOAD-BALANCER-FW", type: "hash:ip,port" },
  { name: "KUBE-LOAD-BALANCER-LOCAL", type: "hash:ip,port" },
  { name: "KUBE-LOAD-BALANCER-SOURCE-IP", type: "hash:ip,port,ip" },
  { name: "KUBE-LOAD-BALANCER-SOURCE-CIDR", type: "hash:ip,port,net" },
  { name: "KUBE-NODE-PORT-TCP", type: "bitmap:port" },
  { name: "KUBE-NODE-PORT-LOCAL-TCP", type: "bitmap:port" },
  { name: "KUBE-NODE-PORT-UDP", type: "bitmap:port" },
  { name: "KUBE-NODE-PORT-LOCAL-UDP", type: "bitmap:port" },
  { name: "KUBE-NODE-PORT-SCTP-HASH", type: "hash:ip,port" },
  { name: "KUBE-NODE-PORT-LOCAL-SCTP-HASH", type: "hash:ip,port" },
  { name: "KUBE-HEALTH-CHECK-NODE-PORT", type: "bitmap:port" },
  { name: "KUBE-IPVS-IPS", type: "hash:ip" },
  // Replaced by the *-SCTP-HASH sets; ipset.go keeps the names with "DO NOT create".
  { name: "KUBE-NODE-PORT-SCTP", type: "bitmap:port", legacy: true },
  { name: "KUBE-NODE-PORT-LOCAL-SCTP", type: "bitmap:port", legacy: true },
];

/** kube-proxy's IPv6 name for a set: "KUBE-" becomes "KUBE-6-", cut to 31 characters. */
export function ipv6IpsetName(name: string): string {
  return name.startsWith("KUBE-") ? `KUBE-6-${name.slice("KUBE-".length)}`.slice(0, 31) : name;
}

const NAMES: ReadonlySet<string> = new Set(KUBE_PROXY_IPSETS.flatMap((s) => [s.name, ipv6IpsetName(s.name)]));

/** True for a name kube-proxy's ipvs mode creates (either family); a look-alike KUBE-* name is not. */
export function isKubeProxyIpset(name: string): boolean {
  return NAMES.has(name);
}
