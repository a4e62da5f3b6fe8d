import {
  CILIUM_LINKS,
  FLANNEL_LINKS,
  ipvsIp6tables,
  ipvsIpsets,
  ipvsIptables,
  kubeIpvs0,
  kubeProxy,
  nftablesClean,
  nftablesNode,
  recording,
} from "../common.js";
import type { Profile } from "../profile.js";

// What kube-proxy v1.34 in ipvs mode made on this node before it was removed for Cilium KPR: recorded
// with the node's links then (eth0, cilium_host/cilium_net).
const CILIUM_HOST = CILIUM_LINKS.filter((l) => l.kind !== "vxlan");
const before = recording("ipvs", "10.5.0.3", kubeProxy("ipvs", "v1.34.1"), CILIUM_HOST);

export const profile: Profile = {
  id: "talos",
  distribution: "Talos Linux",
  plugins: ["Flannel (Talos default)", "Cilium with kube-proxy replacement (cluster.proxy.disabled: true)"],
  title:
    "Talos: cluster.proxy.mode nftables with Flannel; and a node moved to Cilium KPR with kube-proxy's ipvs state left",
  sources: [
    "test/profiles/profiles.md P8 (cluster.proxy {disabled, mode, extraArgs}; proxy.disabled: true is common with Cilium; siderolabs/talos machine config types)",
    "kube-ipvs0 holding addresses with no virtual servers is a black hole whatever the phase",
    "kube-proxy silent, phase guessed: deleting remedies only on the condition that kube-proxy is gone for good",
  ],
  nodes: [
    {
      name: "talos-nft",
      when: "after the switch: talosctl patch mc cluster.proxy.mode nftables, kube-proxy v1.34",
      state: nftablesNode("10.5.0.2", kubeProxy("nftables", "v1.34.1"), {
        links: FLANNEL_LINKS,
        iptables: ["flannel.rules"],
      }),
      expect: nftablesClean(),
      why: "clean",
    },
    {
      name: "talos-cilium-left",
      when: "moved from kube-proxy ipvs to Cilium KPR (proxy.disabled: true): kube-proxy gone, its ipvs state never cleaned",
      state: {
        kernel: "uml",
        links: [{ name: "eth0", kind: "nic", addresses: ["10.5.0.3/24"] }, kubeIpvs0(before), ...CILIUM_HOST],
        ipsets: ipvsIpsets(before),
        iptables: ["kubelet.rules", ...ipvsIptables(before), "cilium.rules"],
        ip6tables: ["kubelet6.rules", ...ipvsIp6tables(before)],
        // The virtual servers are gone (Cilium's cleanup), the rest of ipvs mode's state is not.
        ipvs: [],
        kubeProxy: null,
        nodeIps: ["10.5.0.3"],
        recordings: [before],
      },
      expect: {
        phase: "none",
        phaseSource: "kernel-state",
        verdict: "unhealthy",
        findings: [
          "ipvs-iptables-chains-left",
          "kube-ipsets-left",
          "kube-ipvs0-black-hole",
          "kube-proxy-not-answering",
        ],
        evidence: {
          "kube-ipvs0-black-hole": { blackHoled: ["10.96.0.1", "10.96.0.10", "172.30.0.41"] },
          // The IPv6 proxier's empty KUBE-6-* sets are left too, and named as such.
          "kube-ipsets-left": { ipv6Sets: 17 },
        },
      },
      why: "every ClusterIP kube-ipvs0 still holds is answered locally and dropped, cutting Cilium's Services from this node: critical whatever runs here; nothing answers /proxyMode, so every deletion is given only on the condition that kube-proxy is gone for good",
    },
  ],
};
