import {
  CALICO_LINKS,
  iptablesModeIp6tables,
  iptablesModeIptables,
  ipvsIp6tables,
  ipvsIpsets,
  ipvsIptables,
  kubeProxy,
  recording,
} from "../common.js";
import type { Profile } from "../profile.js";

// What kube-proxy in ipvs mode made on this node before the move to iptables mode: the recording of
// kubeadm-calico-ipvs's node (the same links, Services and config; v1.33 is recorded with v1.34.4).
const before = recording("ipvs", "172.18.0.10", kubeProxy("ipvs", "v1.33.5"), CALICO_LINKS, {
  then: "nftables",
});

// Then kube-proxy in iptables mode on the same node, recorded with the real binary: its restore declares
// and rewrites only the chains it owns (--noflush, as its sync does), so ipvs mode's stay beside them.
const kp = kubeProxy("iptables", "v1.33.5");
const after = recording("iptables", "172.18.0.10", kp, CALICO_LINKS);

// A kubeadm node on Ubuntu 20.04's GA kernel 5.4: too old for nftables mode, so it left ipvs for iptables
// mode (kernel-too-old-for-nftables' advice: "until then set mode: iptables"). kube-proxy cleans ipvs mode's
// state up only when the new mode is not iptables-based, so everything ipvs mode made stays.
export const profile: Profile = {
  id: "kubeadm-ubuntu2004",
  distribution: "kubeadm (Ubuntu 20.04, GA kernel 5.4)",
  plugins: ["Calico (iptables dataplane, VXLAN)"],
  title:
    "kubeadm node below kernel 5.13 moved from ipvs to iptables mode, ipvs mode's chains and ipsets left",
  sources: [
    "cmd/kube-proxy/app/server_linux.go platformCleanup (kubernetes/kubernetes, read at 0014930a): `if !isIPTablesBased(mode) || cleanupAndExit` is the only path to ipvs.CleanupLeftovers; isIPTablesBased is true for iptables and ipvs",
    "pkg/proxy/iptables/cleanup.go: the chains iptables mode owns (nat KUBE-SERVICES, KUBE-NODEPORTS, KUBE-POSTROUTING, KUBE-MARK-MASQ, KUBE-PROXY-CANARY; filter KUBE-SERVICES, KUBE-EXTERNAL-SERVICES, KUBE-FORWARD, KUBE-NODEPORTS, KUBE-PROXY-FIREWALL, KUBE-PROXY-CANARY; per-Service chains)",
    "pkg/proxy/ipvs/proxier.go iptablesJumpChain / iptablesChains: INPUT -> KUBE-NODE-PORT and KUBE-IPVS-FILTER, OUTPUT -> KUBE-IPVS-OUT-FILTER, nat KUBE-NODE-PORT and KUBE-LOAD-BALANCER, filter KUBE-SOURCE-RANGES-FIREWALL",
    "CHANGELOG-1.14 (#76109): after switching modes 'you will need to run kube-proxy --cleanup, or restart the worker node (recommended)'",
    "test/fixtures/kube-proxy/profiles: ipvs mode's recording, then iptables mode's recording of the real binary on the same node (--noflush: iptables mode's restore rewrites the chains it declares, as its sync does)",
  ],
  nodes: [
    {
      name: "ubuntu2004-ipt-left",
      when: "after ipvs -> iptables: kube-proxy v1.33 restarted in iptables mode, ipvs mode's chains and ipsets never cleaned (the node's kube-ipvs0 and IPVS table need UML and are not modelled here; the scan reads this host's kernel, not 5.4)",
      state: {
        kernel: "netns",
        links: [{ name: "eth0", kind: "nic", addresses: ["172.18.0.10/16"] }, ...CALICO_LINKS],
        ipsets: [...ipvsIpsets(before), "calico.ipset"],
        iptables: [
          "kubelet.rules",
          ...ipvsIptables(before),
          ...iptablesModeIptables(after),
          "calico-iptables.rules",
        ],
        ip6tables: ["kubelet6.rules", ...ipvsIp6tables(before), ...iptablesModeIp6tables(after)],
        recordings: [before, after],
        kubeProxy: kp,
        nodeIps: ["172.18.0.10"],
      },
      expect: {
        phase: "iptables",
        phaseSource: "proxyMode",
        verdict: "attention",
        findings: ["ipvs-iptables-chains-left", "kube-ipsets-left"],
        evidence: {
          "ipvs-iptables-chains-left": {
            // ipvs mode's own chains in both families (the IPv6 proxier's too), and nothing iptables mode owns.
            chains: [
              "ipv4 nft filter/KUBE-IPVS-FILTER (6 rules, kube-proxy-ipvs)",
              "ipv4 nft filter/KUBE-IPVS-OUT-FILTER (0 rules, kube-proxy-ipvs)",
              "ipv4 nft filter/KUBE-NODE-PORT (1 rules, kube-proxy-ipvs)",
              "ipv4 nft filter/KUBE-SOURCE-RANGES-FIREWALL (1 rules, kube-proxy-ipvs)",
              "ipv4 nft nat/KUBE-LOAD-BALANCER (1 rules, kube-proxy-ipvs)",
              "ipv4 nft nat/KUBE-NODE-PORT (1 rules, kube-proxy-ipvs)",
              "ipv6 nft filter/KUBE-IPVS-FILTER (6 rules, kube-proxy-ipvs)",
              "ipv6 nft filter/KUBE-IPVS-OUT-FILTER (0 rules, kube-proxy-ipvs)",
              "ipv6 nft filter/KUBE-NODE-PORT (1 rules, kube-proxy-ipvs)",
              "ipv6 nft filter/KUBE-SOURCE-RANGES-FIREWALL (1 rules, kube-proxy-ipvs)",
              "ipv6 nft nat/KUBE-LOAD-BALANCER (1 rules, kube-proxy-ipvs)",
              "ipv6 nft nat/KUBE-NODE-PORT (0 rules, kube-proxy-ipvs)",
            ],
            perServiceChains: 0,
          },
        },
      },
      why: "iptables mode is not deprecated and nothing blocks this node, but ipvs mode's own chains still act: INPUT jumps to KUBE-IPVS-FILTER, which rejects new connections to kube-ipvs0's addresses on ports no longer in its frozen ipsets, and to KUBE-NODE-PORT. They are leftovers on an iptables node too; the chains iptables mode owns and rebuilds (KUBE-SERVICES, KUBE-NODEPORTS, KUBE-POSTROUTING, KUBE-MARK-MASQ, KUBE-FORWARD, KUBE-PROXY-FIREWALL, KUBE-EXTERNAL-SERVICES, KUBE-SVC-*/KUBE-SEP-*) are not",
    },
  ],
};
