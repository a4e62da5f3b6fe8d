import {
  CALICO_LINKS,
  DOCKER_LINK,
  ipvsNode,
  ipvsReady,
  kubeProxy,
  nftablesAfterSwitch,
  nftablesNode,
} from "../common.js";
import type { NodeState, Profile } from "../profile.js";

const ipvs = kubeProxy("ipvs", "v1.34.3", {
  ipvs: { scheduler: "rr", strictARP: false },
  clusterCIDRs: ["192.168.0.0/16"],
});

// Recorded with its switch to nftables mode: what that leaves is loaded on every after-switch node.
const calicoIpvs = ipvsNode("172.18.0.10", ipvs, {
  links: CALICO_LINKS,
  ipsets: ["calico.ipset"],
  iptables: ["calico-iptables.rules"],
  record: { then: "nftables" },
});

/** The real binary's ip table only: its ip6 one is what this node lacks. */
const withoutIp6Table = (s: NodeState): NodeState => ({
  ...s,
  nft: (s.nft ?? []).filter((f) => !f.endsWith("/nft-ip6.nft")),
});

export const profile: Profile = {
  id: "kubeadm-calico",
  distribution: "kubeadm (Ubuntu 24.04)",
  plugins: ["Calico (iptables dataplane, VXLAN)"],
  title: "kubeadm cluster with Calico's iptables dataplane, kube-proxy in ipvs mode, moving to nftables",
  sources: [
    "test/profiles/profiles.md P1 (kubeadm: ConfigMap kube-system/kube-proxy config.conf; verdict before ready with ipvs-mode-deprecated; after clean)",
    "test/profiles/profiles.md Plugins: Calico iptables (cali-* chains, vxlan.calico) never findings",
    "test/fixtures/netfilter/sources/calico-iptables.rules, calico.ipset (projectcalico/calico felix/rules/rule_defs.go)",
    "kube-proxy v1.34 /configz (internal type) and metrics: test/standins/kube-proxy.ts",
    "projectcalico/calico felix/rules/static.go (read through the code index at 00b9aad): StaticFilterForwardChains dispatches only -i/-o cali+ workload traffic and host-endpoint forward policy; StaticFilterForwardAppendRules accepts only what a policy marked (0x10000) and marks the rest: a NodePort flow from the uplink to a pod on another node is accepted by none of it",
    "test/fixtures/netfilter/sources/docker.rules: dockerd's FORWARD policy DROP (moby libnetwork/drivers/bridge setupIPForwarding)",
    'test/fixtures/netfilter/sources/ipvs-match.rules: a host firewall chain matching IPVS-handled traffic with xt_ipvs (iptables-extensions(8) "ipvs")',
  ],
  nodes: [
    {
      name: "kubeadm-calico-ipvs",
      when: "before the switch: kube-proxy v1.34 in ipvs mode, Calico programs pod networking and policy",
      state: calicoIpvs,
      expect: ipvsReady(),
      why: "nothing stands in the way: Calico's cali-* chains and ipsets and its vxlan.calico tunnel address are Calico's own (no NodePort client uses the tunnel address), the scheduler is rr",
    },
    {
      name: "calico-ipvs-dock",
      when: "before the switch: kube-proxy v1.34 in ipvs mode, Calico's iptables dataplane and Docker (its FORWARD policy DROP) on the node",
      state: ipvsNode("172.18.0.12", ipvs, {
        links: [...CALICO_LINKS, DOCKER_LINK],
        ipsets: ["calico.ipset"],
        iptables: ["calico-iptables.rules", "docker.rules"],
      }),
      expect: {
        phase: "ipvs",
        phaseSource: "proxyMode",
        verdict: "attention",
        findings: ["forward-drop-at-switch", "ipvs-mode-deprecated", "ipvs-timeouts-set"],
      },
      why: "the same node as kubeadm-calico-dock one step earlier: today ipvs mode's KUBE-FORWARD accepts the NodePort flow to a remote pod, so nothing is broken yet, but nothing else will accept it after the switch (Felix's cali-FORWARD accepts only its workloads' and policy-marked traffic) and Docker's FORWARD DROP will drop it: plan it before the switch",
    },
    {
      name: "calico-ipvs-match",
      when: "before the switch: kube-proxy v1.34 in ipvs mode, Calico, and a host firewall chain admitting IPVS-handled traffic with -m ipvs",
      // The same node as kubeadm-calico-ipvs (one recording of kube-proxy's state) with the host rules.
      state: ipvsNode("172.18.0.10", ipvs, {
        record: { then: "nftables" },
        links: CALICO_LINKS,
        ipsets: ["calico.ipset"],
        iptables: ["calico-iptables.rules", "ipvs-match.rules"],
      }),
      expect: {
        phase: "ipvs",
        phaseSource: "proxyMode",
        verdict: "attention",
        findings: ["ipvs-match-rules-stop-applying", "ipvs-mode-deprecated", "ipvs-timeouts-set"],
      },
      why: "the xt_ipvs match (iptables-extensions(8)) matches only packets IPVS handled; nftables mode flushes IPVS on start (cmd/kube-proxy/app/server_linux.go platformCleanup, v1.34.4) and DNATs in nftables, so after the switch the host firewall's two -m ipvs accepts match nothing, silently: a warning to rewrite them before the switch, not a blocker",
    },
    {
      name: "kubeadm-calico-nft",
      when: "after the switch: kube-proxy v1.34 restarted in nftables mode, ipvs state cleaned",
      state: nftablesNode("172.18.0.10", kubeProxy("nftables", "v1.34.3"), {
        links: CALICO_LINKS,
        ipsets: ["calico.ipset"],
        iptables: ["calico-iptables.rules"],
        afterSwitch: true,
      }),
      expect: nftablesAfterSwitch(),
      why: "both kube-proxy tables exist, kubelet's and Calico's chains are theirs; the switch's own cleanup left the IPv6 proxier's 17 empty KUBE-6-* sets (it destroys the IPv4 names only): leftovers for the cleanup step, nothing broken",
    },
    {
      name: "kubeadm-calico-noip6",
      when: "after the switch: kube-proxy v1.34 in nftables mode syncs its IPv4 table, but there is no table ip6 kube-proxy",
      state: withoutIp6Table(
        nftablesNode("172.18.0.11", kubeProxy("nftables", "v1.34.3"), {
          links: CALICO_LINKS,
          ipsets: ["calico.ipset"],
          iptables: ["calico-iptables.rules"],
        }),
      ),
      expect: {
        phase: "nftables",
        phaseSource: "proxyMode",
        verdict: "attention",
        findings: ["nftables-table-missing"],
        evidence: { "nftables-table-missing": { missingFamilies: ["ip6"] } },
      },
      why: "nftables mode makes an ip and an ip6 table on every node (cmd/kube-proxy/app/server_linux.go platformCheckSupported assumes both families); without the ip6 one IPv6 Services do not work here. Not broken for IPv4 and nothing left over, but never clean: clean means no warning at all after the switch",
    },
    {
      name: "kubeadm-calico-dock",
      when: "after the switch: kube-proxy v1.34 in nftables mode, Calico's iptables dataplane and Docker (its FORWARD policy DROP) on the node",
      state: nftablesNode("172.18.0.13", kubeProxy("nftables", "v1.34.3"), {
        links: [...CALICO_LINKS, DOCKER_LINK],
        ipsets: ["calico.ipset"],
        iptables: ["calico-iptables.rules", "docker.rules"],
      }),
      expect: {
        phase: "nftables",
        phaseSource: "proxyMode",
        verdict: "unhealthy",
        findings: ["forward-drop-after-switch"],
      },
      why: "Felix's cali-FORWARD accepts only its own workloads' traffic (-i/-o cali+) and what a policy marked: a NodePort flow DNATed in prerouting to a pod on another node leaves through vxlan.calico, no Calico or Docker rule accepts it, and Docker's FORWARD DROP drops it. ipvs mode's KUBE-FORWARD accepted it and is gone: broken now, an error",
    },
  ],
};
