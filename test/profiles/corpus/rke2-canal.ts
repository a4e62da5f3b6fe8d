import {
  FLANNEL_LINKS,
  ipvsNode,
  ipvsReady,
  kubeProxy,
  nftablesAfterSwitch,
  nftablesNode,
} from "../common.js";
import type { Profile } from "../profile.js";

// Canal = Calico for policy + Flannel for the network: both rule sets, Flannel's links.
const canal = {
  links: FLANNEL_LINKS.filter((l) => l.name === "flannel.1"),
  ipsets: ["calico.ipset"],
  iptables: ["flannel.rules", "calico-iptables.rules"],
};
const rke2 = { healthzBindAddress: "127.0.0.1:10256", metricsBindAddress: "127.0.0.1:10249" };

const ipvsState = ipvsNode(
  "192.168.60.31",
  kubeProxy("ipvs", "v1.36.4-rke2r1", { ...rke2, ipvs: { scheduler: "rr" } }),
  { ...canal },
);

export const profile: Profile = {
  id: "rke2-canal",
  distribution: "RKE2",
  plugins: ["Canal (Calico policy + Flannel)"],
  title: "RKE2 with Canal; kube-proxy as a static pod (kube-proxy-arg proxy-mode), v1.36",
  sources: [
    "rancher/rke2 @6ce1a801 pkg/executor/staticpod/staticpod.go KubeProxy ('starts Kube Proxy as a static pod'), pkg/podtemplate/spec.go (kube-proxy health port 10256); commit title 'Update to v1.36.4-rke2r1' for the version string",
    "test/profiles/profiles.md P7 (no ConfigMap; remedy /etc/rancher/rke2/config.yaml kube-proxy-arg)",
    "kube-proxy v1.36 serves /configz in the v1alpha1 type (test/standins/kube-proxy.ts, PR #136044)",
  ],
  nodes: [
    {
      name: "rke2-ipvs",
      when: "before the switch: kube-proxy-arg proxy-mode=ipvs",
      state: ipvsState,
      expect: ipvsReady(),
      why: "Canal's chains and flannel.1 are the CNI's; nothing in the way",
    },
    {
      name: "rke2-nft",
      when: "after the switch: kube-proxy-arg proxy-mode=nftables, rke2 restarted",
      state: nftablesNode("192.168.60.31", kubeProxy("nftables", "v1.36.4-rke2r1", rke2), {
        ...canal,
        afterSwitch: true,
      }),
      expect: nftablesAfterSwitch(),
      why: "the switch's own cleanup left the IPv6 proxier's 17 empty KUBE-6-* sets (it destroys the IPv4 names only): leftovers for the cleanup step, nothing broken",
    },
  ],
};
