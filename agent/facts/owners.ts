import type { ChainOwner } from "./netfilter.js";

// "Is this kube-proxy's?" is answered here and only here: for iptables chains, ipsets and the rules
// that jump into KUBE-* chains. Probes record the answer in the facts; everything else reads it.

// Who writes which KUBE-* chain, from kubernetes/kubernetes source:
// - kubelet: pkg/kubelet/kubelet_network_linux.go (KUBE-IPTABLES-HINT in mangle, KUBE-FIREWALL in
//   filter, KUBE-KUBELET-CANARY via iptClient.Monitor in mangle/nat/filter). Kubelets before the
//   1.28 cleanup also wrote nat KUBE-MARK-DROP/KUBE-MARK-MASQ/KUBE-POSTROUTING.
// - kube-proxy iptables mode: pkg/proxy/iptables/proxier.go (constants, iptablesJumpChains,
//   ipt.Monitor(kubeProxyCanaryChain, mangle/nat/filter)). Its filter KUBE-FIREWALL is a copy of
//   kubelet's ("kubeletFirewallChain ... duplicate of kubelet's firewall") and it never deletes it.
// - kube-proxy ipvs mode: pkg/proxy/ipvs/proxier.go (iptablesChains, iptablesJumpChain). Older
//   releases had nat KUBE-FIREWALL for LoadBalancerSourceRanges (now filter KUBE-PROXY-FIREWALL +
//   KUBE-SOURCE-RANGES-FIREWALL) and nat KUBE-MARK-DROP. ipvs mode has no KUBE-PROXY-CANARY, and its
//   NodePort chain is KUBE-NODE-PORT where iptables mode's is KUBE-NODEPORTS.
const OWNERS: Readonly<Record<string, Readonly<Record<string, ChainOwner>>>> = {
  mangle: {
    "KUBE-IPTABLES-HINT": "kubelet",
    "KUBE-KUBELET-CANARY": "kubelet",
    "KUBE-PROXY-CANARY": "kube-proxy-iptables",
  },
  nat: {
    "KUBE-KUBELET-CANARY": "kubelet",
    "KUBE-MARK-DROP": "kubelet",
    "KUBE-PROXY-CANARY": "kube-proxy-iptables",
    "KUBE-SERVICES": "kube-proxy",
    "KUBE-POSTROUTING": "kube-proxy",
    "KUBE-MARK-MASQ": "kube-proxy",
    "KUBE-NODEPORTS": "kube-proxy-iptables",
    "KUBE-NODE-PORT": "kube-proxy-ipvs",
    "KUBE-LOAD-BALANCER": "kube-proxy-ipvs",
    "KUBE-FIREWALL": "kube-proxy-ipvs",
    "KUBE-FIRE-WALL": "kube-proxy-ipvs",
  },
  filter: {
    "KUBE-FIREWALL": "kubelet",
    "KUBE-KUBELET-CANARY": "kubelet",
    "KUBE-PROXY-CANARY": "kube-proxy-iptables",
    "KUBE-FORWARD": "kube-proxy",
    "KUBE-PROXY-FIREWALL": "kube-proxy",
    "KUBE-SERVICES": "kube-proxy-iptables",
    "KUBE-EXTERNAL-SERVICES": "kube-proxy-iptables",
    "KUBE-NODEPORTS": "kube-proxy-iptables",
    "KUBE-NODE-PORT": "kube-proxy-ipvs",
    "KUBE-SOURCE-RANGES-FIREWALL": "kube-proxy-ipvs",
    "KUBE-IPVS-FILTER": "kube-proxy-ipvs",
    "KUBE-IPVS-OUT-FILTER": "kube-proxy-ipvs",
  },
};

/** Per-Service chain families of iptables mode (pkg/proxy/iptables/proxier.go chain-name helpers). */
const PER_SERVICE_PREFIXES = [
  "KUBE-SVC-",
  "KUBE-SVL-",
  "KUBE-EXT-",
  "KUBE-FW-",
  "KUBE-SEP-",
  "KUBE-XLB-",
] as const;

/** The `patternCounts` key of a per-Service chain ("KUBE-SVC-*"), or null for any other name. */
export function perServicePattern(chain: string): string | null {
  for (const p of PER_SERVICE_PREFIXES) if (chain.startsWith(p)) return `${p}*`;
  return null;
}

export function chainOwner(table: string, chain: string): ChainOwner {
  const known = OWNERS[table]?.[chain];
  if (known) return known;
  // Per-Service chains exist only in iptables mode (KUBE-XLB- is its pre-1.24 name for KUBE-SVL-).
  if (perServicePattern(chain) !== null) return "kube-proxy-iptables";
  return "unknown";
}

/** kube-proxy's chains, of either iptables-family mode: leftovers once it runs nftables mode. kubelet's never are. */
export function isKubeProxyChainOwner(owner: ChainOwner): boolean {
  return owner === "kube-proxy" || owner === "kube-proxy-ipvs" || owner === "kube-proxy-iptables";
}

/**
 * One of kube-proxy's chains, by its exact name or per-Service prefix; kubelet's chains and other KUBE-*
 * look-alikes (kube-router's KUBE-ROUTER-*, KUBE-POD-FW-*, KUBE-NWPLCY-*, cloudnativelabs/kube-router
 * pkg/controllers/netpol/network_policy_controller.go) are not.
 */
export function isKubeProxyChain(table: string, chain: string): boolean {
  return chain.startsWith("KUBE-") && isKubeProxyChainOwner(chainOwner(table, chain));
}

/**
 * Comments kube-proxy puts on the rules that jump from built-in chains into its own chains
 * (iptables mode: iptablesJumpChains; ipvs mode: iptablesJumpChain). A jump into KUBE-* that
 * carries none of these, and is not kubelet's, was written by someone else.
 */
export const KUBE_PROXY_JUMP_COMMENTS: ReadonlySet<string> = new Set([
  "kubernetes service portals",
  "kubernetes externally-visible service portals",
  "kubernetes health check service ports",
  "kubernetes forwarding rules",
  "kubernetes load balancer firewall",
  "kubernetes postrouting rules",
  "kubernetes health check rules",
  "kube-proxy firewall rules",
  "kubernetes ipvs access filter",
]);

/**
 * kubelet (and kube-proxy's iptablesKubeletJumpChains copy) jump from filter INPUT/OUTPUT to
 * KUBE-FIREWALL with no comment and no match: `-A INPUT -j KUBE-FIREWALL`.
 */
export function isKubeletJump(table: string, chain: string, rule: string, target: string): boolean {
  return (
    table === "filter" &&
    target === "KUBE-FIREWALL" &&
    (chain === "INPUT" || chain === "OUTPUT") &&
    rule === `-A ${chain} -j KUBE-FIREWALL`
  );
}

/** Non-KUBE user chains whose names say "host firewall" (ufw, fail2ban, firewalld's iptables backend, Docker's user hook). */
export const FIREWALL_CHAIN_PATTERNS: readonly RegExp[] = [
  /^ufw6?-/,
  /^f2b-/,
  /^fail2ban-/,
  /^IN_public/,
  /^INPUT_direct$/,
  /^FWDI_/,
  /^csf/i,
];

// The ipsets kube-proxy's ipvs mode creates: `ipsetInfo` in kubernetes/kubernetes
// pkg/proxy/ipvs/proxier.go, names from pkg/proxy/ipvs/ipset.go. The IPv6 proxier renames each
// "KUBE-" to "KUBE-6-" and cuts the result to ipset's 31 characters (NewIPSet), so two IPv6 names
// are truncated: KUBE-6-LOAD-BALANCER-SOURCE-CID and KUBE-6-NODE-PORT-LOCAL-SCTP-HAS.

interface KubeProxyIpset {
  name: string;
  type: string;
  /** Only created by older kube-proxy versions; still found on nodes upgraded since. */
  legacy?: true;
  /**
   * Holds every Service address:port of its kind that ipvs mode serves (proxier.go syncProxyRules: each
   * ClusterIP in KUBE-CLUSTER-IP; an external IP in KUBE-EXTERNAL-IP, or KUBE-EXTERNAL-IP-LOCAL under
   * externalTrafficPolicy Local; a load-balancer IP in KUBE-LOAD-BALANCER): membership proves it kube-proxy's.
   */
  serviceAddresses?: true;
  /**
   * Holds every NodePort of this protocol: bitmap:port (the port alone) for TCP and UDP, hash:ip,port for SCTP
   * (bitmap:port in the legacy KUBE-NODE-PORT-SCTP of the versions that made it).
   */
  nodePorts?: "TCP" | "UDP" | "SCTP";
}

export const KUBE_PROXY_IPSETS: readonly KubeProxyIpset[] = [
  { name: "KUBE-LOOP-BACK", type: "hash:ip,port,ip" },
  { name: "KUBE-CLUSTER-IP", type: "hash:ip,port", serviceAddresses: true },
  { name: "KUBE-EXTERNAL-IP", type: "hash:ip,port", serviceAddresses: true },
  { name: "KUBE-EXTERNAL-IP-LOCAL", type: "hash:ip,port", serviceAddresses: true },
  { name: "KUBE-LOAD-BALANCER", type: "hash:ip,port", serviceAddresses: true },
  { name: "KUBE-LOAD-BALANCER-FW", type: "hash:ip,port" },
  { name: "KUBE-LOAD-BALANCER-LOCAL", type: "hash:ip,port" },
  { name: "KUBE-LOAD-BALANCER-SOURCE-IP", type: "hash:ip,port,ip" },
  { name: "KUBE-LOAD-BALANCER-SOURCE-CIDR", type: "hash:ip,port,net" },
  { name: "KUBE-NODE-PORT-TCP", type: "bitmap:port", nodePorts: "TCP" },
  { name: "KUBE-NODE-PORT-LOCAL-TCP", type: "bitmap:port" },
  { name: "KUBE-NODE-PORT-UDP", type: "bitmap:port", nodePorts: "UDP" },
  { name: "KUBE-NODE-PORT-LOCAL-UDP", type: "bitmap:port" },
  { name: "KUBE-NODE-PORT-SCTP-HASH", type: "hash:ip,port", nodePorts: "SCTP" },
  { name: "KUBE-NODE-PORT-LOCAL-SCTP-HASH", type: "hash:ip,port" },
  { name: "KUBE-HEALTH-CHECK-NODE-PORT", type: "bitmap:port" },
  { name: "KUBE-IPVS-IPS", type: "hash:ip" },
  // Replaced by the *-SCTP-HASH sets; ipset.go keeps the names with "DO NOT create".
  { name: "KUBE-NODE-PORT-SCTP", type: "bitmap:port", nodePorts: "SCTP", legacy: true },
  { name: "KUBE-NODE-PORT-LOCAL-SCTP", type: "bitmap:port", legacy: true },
];

/** kube-proxy's IPv6 name for a set: "KUBE-" becomes "KUBE-6-", cut to 31 characters. */
export function ipv6IpsetName(name: string): string {
  return name.startsWith("KUBE-") ? `KUBE-6-${name.slice("KUBE-".length)}`.slice(0, 31) : name;
}

const NAMES: ReadonlySet<string> = new Set(KUBE_PROXY_IPSETS.flatMap((s) => [s.name, ipv6IpsetName(s.name)]));

/** Both families' names of these sets: each IPv4 name, then its IPv6 twin. */
const bothFamilies = (sets: readonly KubeProxyIpset[]): string[] =>
  sets.flatMap((s) => [s.name, ipv6IpsetName(s.name)]);

/** The sets holding every Service address:port ipvs mode serves, both families (KUBE-CLUSTER-IP, ...). */
export const SERVICE_ADDRESS_IPSETS: readonly string[] = bothFamilies(
  KUBE_PROXY_IPSETS.filter((s) => s.serviceAddresses === true),
);

/** The sets holding every NodePort of `protocol` that today's ipvs mode makes, both families; [] for another protocol. */
export function nodePortIpsets(protocol: string): readonly string[] {
  return bothFamilies(KUBE_PROXY_IPSETS.filter((s) => s.nodePorts === protocol && s.legacy !== true));
}

/** True for a name kube-proxy's ipvs mode creates (either family); a look-alike KUBE-* name is not. */
export function isKubeProxyIpset(name: string): boolean {
  return NAMES.has(name);
}
