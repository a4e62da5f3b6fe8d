import type { Profile } from "../profile.js";

export const profile: Profile = {
  id: "openshift-ovn",
  distribution: "OpenShift / OKD",
  plugins: ["OVN-Kubernetes (implements Services, no kube-proxy)"],
  title: "OpenShift with OVN-Kubernetes: no kube-proxy on the node",
  sources: [
    "test/profiles/profiles.md P9 (no kube-proxy; an openshift-kube-proxy DaemonSet exists only for third-party plugins): phase none, kube-proxy-free, clean",
    "OVN-Kubernetes' own netfilter rules: NOT read; the node is built with its links only (br-ex holding the node address, ovn-k8s-mp0 the management port), as Linux bridge/veth stand-ins for OVS ports",
  ],
  nodes: [
    {
      name: "ocp-ovn",
      when: "any time: OVN implements Services",
      state: {
        kernel: "netns",
        links: [
          { name: "br-ex", kind: "bridge", addresses: ["10.0.0.5/24"] },
          { name: "ovn-k8s-mp0", kind: "veth", addresses: ["10.128.0.2/23"] },
        ],
        iptables: ["kubelet.rules"],
        ip6tables: ["kubelet6.rules"],
        kubeProxy: null,
        nodeIps: ["10.0.0.5"],
      },
      expect: { phase: "none", phaseSource: "kernel-state", verdict: "clean", findings: ["kube-proxy-free"] },
      why: "nothing to migrate and nothing else to say",
    },
  ],
};
