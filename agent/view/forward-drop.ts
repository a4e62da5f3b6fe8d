import { UNCONDITIONAL_ACCEPT } from "../parse/iptables-save.js";
import type { NodeFacts } from "../report/schema.js";

// Network plugins whose chain, jumped to from filter/FORWARD, accepts forwarded traffic to pods on other
// nodes (a NodePort / externalIP flow DNATed in prerouting: in on the node's uplink, out towards the pod
// network), each from its own rules: flannel-io/flannel pkg/trafficmngr/iptables forwardRules (FLANNEL-FWD
// accepts -s/-d the pod network; test/fixtures/netfilter/sources/flannel.rules); cilium/cilium
// pkg/datapath/iptables (CILIUM_FORWARD: "any->cluster on cilium_host forward accept", -o cilium_host,
// the device routes to pod CIDRs go through).
const COVERING: Readonly<Record<string, string>> = {
  "FLANNEL-FWD": "Flannel",
  CILIUM_FORWARD: "Cilium",
  // The workaround of kubernetes/kubernetes#39823: the policy is moot.
  [UNCONDITIONAL_ACCEPT]: "an unconditional accept",
};
// Chains that accept only traffic of this node's own pods, never uplink-to-remote-pod: Calico's
// cali-FORWARD dispatches only -i cali+ / -o cali+ and host-endpoint forward policy, and the rules Felix
// appends to FORWARD accept only what a policy marked (projectcalico/calico felix/rules/static.go
// StaticFilterForwardChains, StaticFilterForwardAppendRules; calico-iptables.rules is a real node's; the
// kubeadm-calico-dock profile); kube-router's KUBE-ROUTER-FORWARD accepts what its per-pod
// chains marked (-s/-d this node's pod IPs; kube-router-netpol.rules). Docker's DOCKER-USER / DOCKER-FORWARD
// accept docker0 and its bridges. kube-proxy's own KUBE-FORWARD goes at the switch: ipvs mode writes it
// (pkg/proxy/ipvs/proxier.go v1.34.4: "this allows NodePort traffic to be forwarded even if the default
// FORWARD policy is not accept"), nftables mode writes nothing into iptables' FORWARD.
const LOCAL_ONLY: Readonly<Record<string, string>> = {
  "cali-FORWARD": "Calico's accepts only this node's workloads' traffic (-i/-o cali+)",
  "KUBE-ROUTER-FORWARD": "kube-router's accepts only this node's pods' traffic its policies marked",
  "DOCKER-USER": "Docker's: only what a user put there",
  "DOCKER-FORWARD": "Docker's accepts only its own bridges",
  "KUBE-FORWARD": "kube-proxy's ipvs-mode chain: gone after the switch",
};

interface ForwardDrop {
  /** Each FORWARD policy DROP no network plugin's accept covers ("ipv4 legacy filter/FORWARD policy DROP"). */
  uncovered: string[];
  /** FORWARD DROPs a plugin's accept covers, with the plugin. */
  covered: string[];
}

/**
 * The FORWARD drops that forwarded Service traffic meets once nftables mode DNATs in prerouting. Only
 * called when the iptables and nftables probes read everything (the rules' `needs`): a backend not read
 * fails the iptables probe (facts/unread.ts), so no drop is missed by being unread. A backend read by an
 * older agent that did not list FORWARD's jumps counts as uncovered, with that said.
 */
export function forwardDrops(
  f: Pick<NodeFacts, "iptables" | "nftables">,
  ipv6Services: boolean,
): ForwardDrop {
  const uncovered: string[] = [];
  const covered: string[] = [];
  for (const b of f.iptables?.backends ?? []) {
    if (!b.read || b.policies["filter/FORWARD"] !== "DROP") continue;
    // No IPv6 Service flow meets ip6tables' FORWARD (dockerd sets DROP there too when it forwards IPv6).
    if (b.family === "ipv6" && !ipv6Services) continue;
    const seen = `${b.family} ${b.backend} filter/FORWARD policy DROP`;
    const docker =
      (b.dockerChains ?? []).length > 0 ? " (Docker's: dockerd sets it when it enables ip_forward)" : "";
    if (b.forwardJumps === undefined) {
      uncovered.push(`${seen}${docker}; FORWARD's jumps not read (older agent)`);
      continue;
    }
    const plugins = b.forwardJumps.flatMap((j) => {
      const p = COVERING[j];
      return p === undefined ? [] : [`${p} (${j})`];
    });
    if (plugins.length > 0) covered.push(`${seen}${docker}: accepted by ${plugins.join(", ")}`);
    else {
      const jumps = b.forwardJumps.map((j) => (LOCAL_ONLY[j] === undefined ? j : `${j} (${LOCAL_ONLY[j]})`));
      uncovered.push(`${seen}${docker}; FORWARD jumps to: ${jumps.join(", ") || "nothing"}`);
    }
  }
  // A drop in any base chain of the forward hook drops the packet whatever iptables' FORWARD accepts.
  for (const t of f.nftables?.firewalls ?? [])
    if ((t.family !== "ip6" || ipv6Services) && t.hooks.includes("forward:drop"))
      uncovered.push(`nft table ${t.family} ${t.name} (${t.kind}): forward hook policy drop`);
  return { uncovered, covered };
}

/**
 * kube-proxy serves IPv6 Services here: an IPv6 address among its IPVS Service virtual servers (ipvs mode),
 * or endpoint chains in its `table ip6` (nftables mode). When neither was read, assumed (never "none").
 */
export function servesIpv6(
  f: Pick<NodeFacts, "ipvs" | "nftables">,
  services: readonly { address: string | null }[],
): boolean {
  if (f.ipvs?.available === true && services.some((v) => v.address?.includes(":") === true)) return true;
  if ((f.nftables?.kubeProxy ?? []).some((t) => t.family === "ip6" && t.chains.endpoint > 0)) return true;
  return (f.ipvs === null || f.ipvs.available !== true) && f.nftables === null;
}
