import {
  CALICO_LINKS,
  iptablesModeIp6tables,
  iptablesModeIptables,
  kubeIpvs0,
  kubeProxy,
  recording,
} from "../common.js";
import type { Profile } from "../profile.js";

// kube-ipvs0 as kube-proxy v1.34 in ipvs mode left it on this node, before Calico eBPF replaced it (the
// recording of kubeadm-calico-ipvs's node: the same links, Services and config).
const before = recording("ipvs", "172.18.0.10", kubeProxy("ipvs", "v1.34.3"), CALICO_LINKS, {
  then: "nftables",
});

// kube-proxy on AKS beside Calico eBPF, in iptables mode: its chains as the real binary made them.
const aksKubeProxy = kubeProxy("iptables", "v1.33.5");
const aks = recording("iptables", "10.224.0.5", aksKubeProxy);

export const profile: Profile = {
  id: "calico-ebpf",
  distribution: "kubeadm (Ubuntu 22.04); AKS",
  plugins: ["Calico eBPF dataplane"],
  title:
    "Calico eBPF: kube-proxy removed after a move off ipvs (kube-ipvs0 left); on AKS kube-proxy stays alongside",
  sources: [
    "test/profiles/profiles.md Plugins: Calico eBPF ('native support for Kubernetes services (without needing kube-proxy)', https://docs.tigera.io/calico/latest/operations/ebpf/install; on AKS+Azure CNI 'it is not possible to disable kube-proxy', https://docs.tigera.io/calico/3.28/operations/ebpf/enabling-ebpf)",
    "kube-ipvs0 is a black hole in any phase, and the 'Done when' deletion rule",
    "test/fixtures/netfilter/sources/calico-ebpf.rules (felix/rules/rule_defs.go chain names; BPF-mode rule bodies not read)",
  ],
  nodes: [
    {
      name: "calico-ebpf-left",
      when: "after the move to Calico eBPF: kube-proxy's DaemonSet deleted (it was in ipvs mode), kube-ipvs0 still holds the ClusterIPs",
      state: {
        kernel: "uml",
        links: [
          { name: "eth0", kind: "nic", addresses: ["172.18.0.10/16"] },
          kubeIpvs0(before),
          ...CALICO_LINKS,
        ],
        iptables: ["kubelet.rules", "calico-ebpf.rules"],
        ipvs: [],
        kubeProxy: null,
        nodeIps: ["172.18.0.10"],
        recordings: [before],
      },
      expect: {
        phase: "none",
        phaseSource: "kernel-state",
        verdict: "unhealthy",
        findings: ["kube-ipvs0-black-hole", "kube-proxy-not-answering"],
        evidence: { "kube-ipvs0-black-hole": { blackHoled: ["10.96.0.1", "10.96.0.10", "172.30.0.41"] } },
      },
      why: "Calico's BPF programs never see traffic to a ClusterIP the kernel holds as local: every one on kube-ipvs0 is cut from this node, critical. kube-proxy does not answer, so `ip link delete kube-ipvs0` comes only after confirming it is gone for good",
    },
    {
      name: "aks-calico-ebpf-ipt",
      when: "AKS + Azure CNI with Calico eBPF: kube-proxy cannot be disabled there and keeps running in iptables mode",
      state: {
        kernel: "netns",
        links: [{ name: "eth0", kind: "nic", addresses: ["10.224.0.5/16"] }],
        iptables: ["kubelet.rules", ...iptablesModeIptables(aks), "calico-ebpf.rules"],
        ip6tables: ["kubelet6.rules", ...iptablesModeIp6tables(aks)],
        kubeProxy: aksKubeProxy,
        nodeIps: ["10.224.0.5"],
        recordings: [aks],
      },
      expect: { phase: "iptables", phaseSource: "proxyMode", verdict: "ready", findings: [] },
      why: "kube-proxy's own answer decides; Calico's chains beside it are not findings",
    },
  ],
};
