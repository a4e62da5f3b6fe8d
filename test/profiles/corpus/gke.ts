import {
  CILIUM_LINKS,
  iptablesModeIp6tables,
  iptablesModeIptables,
  kubeProxy,
  recording,
} from "../common.js";
import type { Profile } from "../profile.js";

const kp = kubeProxy("iptables", "v1.33.5");
// The legacy dataplane's kube-proxy state, recorded with the real binary (v1.33 with v1.34.4).
const legacy = recording("iptables", "10.128.0.8", kp);

export const profile: Profile = {
  id: "gke",
  distribution: "GKE (Container-Optimized OS)",
  plugins: ["Dataplane V2 (Cilium, kube-proxy replacement)", "legacy dataplane (kube-proxy iptables)"],
  title: "GKE: Dataplane V2 has no kube-proxy; the legacy dataplane runs kube-proxy in iptables mode",
  sources: [
    "test/profiles/profiles.md P4 (DPv2 = Cilium, no kube-proxy: phase none, kube-proxy-free, clean; legacy: iptables, ready). GKE's own docs: NOT read",
    "test/fixtures/netfilter/sources/cilium.rules (cilium/cilium pkg/datapath/iptables), kube-proxy's iptables-mode chains recorded from the real binary (test/profiles/record-kube-proxy.ts)",
  ],
  nodes: [
    {
      name: "gke-dpv2",
      when: "Dataplane V2: Cilium implements Services, no kube-proxy ever ran",
      state: {
        kernel: "netns",
        links: [{ name: "eth0", kind: "nic", addresses: ["10.128.0.7/32"] }, ...CILIUM_LINKS],
        iptables: ["kubelet.rules", "cilium.rules"],
        ip6tables: ["kubelet6.rules"],
        kubeProxy: null,
        nodeIps: ["10.128.0.7"],
      },
      expect: { phase: "none", phaseSource: "kernel-state", verdict: "clean", findings: ["kube-proxy-free"] },
      why: "nothing to migrate; Cilium's chains and links are not kube-proxy state, and no kube-proxy is not 'kube-proxy not answering'",
    },
    {
      name: "gke-legacy-ipt",
      when: "legacy dataplane: kube-proxy v1.33 in iptables mode (nothing to move off ipvs)",
      state: {
        kernel: "netns",
        links: [{ name: "eth0", kind: "nic", addresses: ["10.128.0.8/32"] }],
        iptables: ["kubelet.rules", ...iptablesModeIptables(legacy)],
        ip6tables: ["kubelet6.rules", ...iptablesModeIp6tables(legacy)],
        kubeProxy: kp,
        nodeIps: ["10.128.0.8"],
        recordings: [legacy],
      },
      expect: { phase: "iptables", phaseSource: "proxyMode", verdict: "ready", findings: [] },
      why: "iptables mode is not deprecated; no localhost NodePort traffic was counted",
    },
  ],
};
