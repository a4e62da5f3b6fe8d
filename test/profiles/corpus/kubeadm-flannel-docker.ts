import {
  DOCKER_LINK,
  FLANNEL_LINKS,
  ipvsIp6tables,
  ipvsIpsets,
  ipvsIptables,
  ipvsNode,
  ipvsReady,
  kubeProxy,
  nftablesNode,
  NODELOCALDNS_LINK,
  recording,
} from "../common.js";
import type { Profile } from "../profile.js";

const links = [...FLANNEL_LINKS, DOCKER_LINK, NODELOCALDNS_LINK];
const plugins = ["flannel.rules", "docker.rules", "nodelocaldns.rules"];
const ipvs = kubeProxy("ipvs", "v1.33.5", { ipvs: { scheduler: "rr" } });
// What ipvs mode made on this node, left after the switch (the same recording as kubeadm-flannel-ipvs).
const before = recording("ipvs", "172.18.0.11", ipvs, links);

export const profile: Profile = {
  id: "kubeadm-flannel-docker",
  distribution: "kubeadm (Debian 12)",
  plugins: ["Flannel (vxlan)", "Docker Engine on the node", "NodeLocal DNSCache"],
  title: "kubeadm + Flannel on a node that also runs Docker and NodeLocal DNSCache (169.254.20.10)",
  sources: [
    "test/profiles/profiles.md P1, Plugins: Flannel, Docker on the node, NodeLocal DNSCache",
    "nodeport-addresses-shrink must not fire on cni0/docker0/flannel.1/nodelocaldns; host-firewall-needs-nodeport-range must not fire on Docker's FORWARD DROP",
    "forward-drop-after-switch: pkg/proxy/nftables/proxier.go v1.34.4 nftablesBaseChains (DNAT at prerouting, filter-forward only rejects); pkg/proxy/ipvs/proxier.go v1.34.4 KUBE-FORWARD; kubernetes/kubernetes#39823",
    "test/fixtures/netfilter/sources/flannel.rules (flannel-io/flannel), docker.rules (moby/moby iptablesdoc new-daemon.md), nodelocaldns.rules (kubernetes/dns node-cache)",
    "DESIGN.md 'Facts that trip people': kube-proxy's ipvs cleanup leaves ipsets/chains unless run; kubelet owns KUBE-FIREWALL etc.",
  ],
  nodes: [
    {
      name: "kubeadm-flannel-ipvs",
      when: "before the switch: kube-proxy v1.33 in ipvs mode",
      state: ipvsNode("172.18.0.11", ipvs, {
        links,
        iptables: plugins,
      }),
      expect: ipvsReady(),
      why: "cni0, flannel.1, docker0 and 169.254.20.10 never receive NodePort traffic, and the FORWARD DROP is Docker's own policy, not a host firewall someone must open: nothing for a person to do",
    },
    {
      name: "kubeadm-flannel-nft",
      when: "after the switch: kube-proxy v1.33 in nftables mode; the ipvs ipsets and chains were not cleaned",
      state: nftablesNode("172.18.0.11", kubeProxy("nftables", "v1.33.5"), {
        links,
        ipsets: ipvsIpsets(before),
        iptables: [...ipvsIptables(before), ...plugins],
        ip6tables: ipvsIp6tables(before),
        recordings: [before],
      }),
      expect: {
        phase: "nftables",
        phaseSource: "proxyMode",
        verdict: "leftovers",
        findings: ["ipvs-iptables-chains-left", "kube-ipsets-left"],
        evidence: {
          // The real binary's 17 IPv6 sets (the hand-built fixture had 8).
          "kube-ipsets-left": { ipv6Sets: 17 },
          // Both families' chains: the IPv6 proxier's (kube-proxy-ipvs-mode6.rules) are left as well.
          "ipvs-iptables-chains-left": {
            chains: ["ipv4", "ipv6"].flatMap((fam) =>
              [
                "filter/KUBE-FORWARD (2 rules, kube-proxy)",
                "filter/KUBE-IPVS-FILTER (6 rules, kube-proxy-ipvs)",
                "filter/KUBE-IPVS-OUT-FILTER (0 rules, kube-proxy-ipvs)",
                "filter/KUBE-NODE-PORT (1 rules, kube-proxy-ipvs)",
                "filter/KUBE-PROXY-FIREWALL (0 rules, kube-proxy)",
                "filter/KUBE-SOURCE-RANGES-FIREWALL (1 rules, kube-proxy-ipvs)",
                "nat/KUBE-LOAD-BALANCER (1 rules, kube-proxy-ipvs)",
                "nat/KUBE-MARK-MASQ (1 rules, kube-proxy)",
                // Without IPv6 Services no set-match rule jumps to the IPv6 KUBE-NODE-PORT, and KUBE-SERVICES
                // keeps only the loopback return and the KUBE-NODE-PORT jump (writeIptablesRules).
                `nat/KUBE-NODE-PORT (${fam === "ipv4" ? 1 : 0} rules, kube-proxy-ipvs)`,
                // The real binary writes the hairpin, LB and external-IP rules only for non-empty sets:
                // 3 and 4 rules where the hand-built chains had 4 and 9.
                `nat/KUBE-POSTROUTING (3 rules, kube-proxy)`,
                `nat/KUBE-SERVICES (${fam === "ipv4" ? 4 : 2} rules, kube-proxy)`,
              ].map((c) => `${fam} nft ${c}`),
            ),
          },
        },
      },
      why: "kube-proxy answers nftables, so its ipvs-mode ipsets and chains are leftovers with a plain remedy; Flannel's, Docker's and node-cache's rules and links are not kube-proxy's and stay",
    },
    {
      name: "kubeadm-bridge-dock",
      when: "after the switch: kube-proxy v1.33 in nftables mode, a bare bridge CNI (no FORWARD accepts of its own) and Docker",
      state: nftablesNode("172.18.0.12", kubeProxy("nftables", "v1.33.5"), {
        links: [{ name: "cni0", kind: "bridge", addresses: ["10.85.0.1/16"] }, DOCKER_LINK],
        iptables: ["docker.rules"],
      }),
      expect: {
        phase: "nftables",
        phaseSource: "proxyMode",
        verdict: "unhealthy",
        findings: ["forward-drop-after-switch"],
      },
      why: "nftables mode DNATs in prerouting and accepts nothing in forward; ipvs mode's KUBE-FORWARD, which accepted that traffic, is gone; Docker's FORWARD DROP now drops every new NodePort flow to an endpoint on another node, and no plugin accepts it: broken now, an error",
    },
  ],
};
