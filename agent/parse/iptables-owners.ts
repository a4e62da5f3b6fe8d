import type { ChainOwner } from "../facts/netfilter.js";

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
export const PER_SERVICE_PREFIXES = [
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
