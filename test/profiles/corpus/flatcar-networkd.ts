import { CALICO_LINKS, ipvsNode, ipvsReady, kubeIpvs0, kubeProxy, recording } from "../common.js";
import type { NodeState, Profile } from "../profile.js";

// kube-proxy only adds kube-ipvs0 and never brings it up; on these nodes systemd-networkd does. Its
// catch-all zz-default.network matched every link, kube* included, until flatcar/init#89 (2023-02)
// excluded them; the kernel then gives the up dummy an IPv6 link-local address of its own, as the
// `ip addr show kube-ipvs0` in k/k#70113 shows (`<BROADCAST,NOARP,UP,LOWER_UP>`, `inet6 fe80::…/64 scope
// link`). Built in UML, where bringing the real dummy up makes the kernel add that address itself.
const upIpvs0 = (s: NodeState): NodeState => ({
  ...s,
  links: (s.links ?? []).map((l) => (l.name === "kube-ipvs0" ? { ...l, up: true } : l)),
});

const ipvs = kubeProxy("ipvs", "v1.33.5", { ipvs: { scheduler: "rr", strictARP: false } });
const calico = { links: CALICO_LINKS, ipsets: ["calico.ipset"], iptables: ["calico-iptables.rules"] };

// kube-ipvs0 as kube-proxy v1.33 in ipvs mode left it on the node moved to Calico eBPF.
const ebpfBefore = recording("ipvs", "172.18.0.50", ipvs, CALICO_LINKS);

export const profile: Profile = {
  id: "flatcar-networkd",
  distribution: "kubeadm (Flatcar Container Linux, systemd-networkd)",
  plugins: ["Calico (iptables dataplane, VXLAN)", "Calico eBPF dataplane"],
  title:
    "kube-ipvs0 brought up by systemd-networkd, so it carries its own fe80:: address beside the ClusterIPs",
  sources: [
    "kubernetes/kubernetes pkg/proxy/ipvs/netlink_linux.go: EnsureDummyDevice only LinkAdd()s kube-ipvs0; GetLocalAddresses/isValidForSet: 'IPv6 link-local and loopback addresses are excluded' (code index id 756434831)",
    "https://github.com/kubernetes/kubernetes/issues/70113 (kube-ipvs0 UP with inet6 fe80::…/64 scope link; kube-proxy then tried to unbind it every sync, fixed by #70509)",
    "https://github.com/kubernetes/kubernetes/pull/63199 (bringing dummy links up by default: not merged; 'I don't think kube-ipvs0 need to be brought up'), https://github.com/kubernetes/kubernetes/issues/107662 ('kube-ipvs0 should be down and noarp. This is intentional')",
    "https://github.com/flatcar/init/pull/89 (exclude node* and kube* links from the default DHCP .network); kubespray#6950 / #7315 (NetworkManager managing kube-ipvs0 likewise)",
    "test/profiles/profiles.md P1 and Plugins: Calico iptables / Calico eBPF; test/fixtures/os-release/flatcar",
  ],
  nodes: [
    {
      name: "flatcar-ipvs-up",
      when: "before the switch: kube-proxy v1.33 in ipvs mode, kube-ipvs0 up (networkd) with its fe80:: address",
      state: upIpvs0(ipvsNode("172.18.0.50", ipvs, calico)),
      expect: ipvsReady(),
      why: "an up kube-ipvs0 changes nothing kube-proxy does: every ClusterIP has its virtual server, the fe80:: address is the kernel's, no NodePort address and no Service",
    },
    {
      name: "flatcar-kp-silent",
      when: "kube-proxy v1.33 in ipvs mode restarting (nothing answers on 10249), its state all in place, kube-ipvs0 up",
      state: { ...upIpvs0(ipvsNode("172.18.0.50", ipvs, calico)), kubeProxy: null },
      expect: {
        phase: "ipvs",
        phaseSource: "kernel-state",
        verdict: "unknown",
        findings: ["ipvs-timeouts-set", "kube-proxy-not-answering"],
      },
      why: "the phase is a guess from the kernel, so the verdict says unknown and why; every ClusterIP on kube-ipvs0 still has its virtual server, so there is no black hole — the link's own fe80:: address is no ClusterIP and must not be called one (a critical false alarm on every networkd-managed node whose kube-proxy blinks)",
    },
    {
      name: "flatcar-ebpf-left",
      when: "after the move to Calico eBPF: kube-proxy deleted (it was in ipvs mode), kube-ipvs0 left up, holding the ClusterIPs and its fe80::",
      state: {
        kernel: "uml",
        links: [
          { name: "eth0", kind: "nic", addresses: ["172.18.0.50/16"] },
          { ...kubeIpvs0(ebpfBefore), up: true },
          ...CALICO_LINKS,
        ],
        iptables: ["kubelet.rules", "calico-ebpf.rules"],
        ipvs: [],
        kubeProxy: null,
        nodeIps: ["172.18.0.50"],
        recordings: [ebpfBefore],
      },
      expect: {
        phase: "none",
        phaseSource: "kernel-state",
        verdict: "unhealthy",
        findings: ["kube-ipvs0-black-hole", "kube-proxy-not-answering"],
        evidence: {
          "kube-ipvs0-black-hole": {
            blackHoled: ["10.96.0.1", "10.96.0.10", "172.30.0.41"],
            blackHoledCount: 3,
            addressesOnKubeIpvs0: 3,
          },
        },
      },
      why: "the three ClusterIPs are cut from this node (critical, as calico-ebpf-left); the fe80:: address is not one of them and the count says three, not four",
    },
  ],
};
