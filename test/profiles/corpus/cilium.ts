import {
  CILIUM_LINKS,
  ipvsNode,
  ipvsReady,
  kubeProxy,
  nftablesAfterSwitch,
  nftablesNode,
} from "../common.js";
import type { Profile } from "../profile.js";

const cilium = { links: CILIUM_LINKS, iptables: ["cilium.rules"] };

const ipvsState = ipvsNode("172.18.0.50", kubeProxy("ipvs", "v1.35.4", { ipvs: { scheduler: "rr" } }), {
  ...cilium,
});

export const profile: Profile = {
  id: "cilium",
  distribution: "kubeadm (RHEL 9)",
  plugins: ["Cilium without kube-proxy replacement"],
  title: "Cilium with kubeProxyReplacement=false: kube-proxy runs in ipvs mode, then nftables",
  sources: [
    "test/profiles/profiles.md Plugins: Cilium KPR=false (kube-proxy runs, Cilium chains present, normal verdicts)",
    "test/fixtures/netfilter/sources/cilium.rules (cilium/cilium pkg/datapath/iptables)",
  ],
  nodes: [
    {
      name: "cilium-ipvs",
      when: "before the switch: kube-proxy v1.35 ipvs beside Cilium",
      state: ipvsState,
      expect: ipvsReady(),
      why: "cilium_host's router address is Cilium's, not a NodePort destination; CILIUM_* chains are Cilium's",
    },
    {
      name: "cilium-nft",
      when: "after the switch: kube-proxy v1.35 nftables beside Cilium",
      state: nftablesNode("172.18.0.50", kubeProxy("nftables", "v1.35.4"), {
        ...cilium,
        afterSwitch: true,
      }),
      expect: nftablesAfterSwitch(),
      why: "the switch's own cleanup left the IPv6 proxier's 17 empty KUBE-6-* sets (it destroys the IPv4 names only): leftovers for the cleanup step, nothing broken; Cilium's chains are not kube-proxy's",
    },
  ],
};
