import {
  FLANNEL_LINKS,
  ipvsNode,
  ipvsReady,
  kubeProxy,
  nftablesAfterSwitch,
  nftablesNode,
} from "../common.js";
import type { Profile } from "../profile.js";

// k3s's embedded kube-proxy: proxy-mode from --kube-proxy-arg, healthz-bind-address 127.0.0.1, metrics
// on kube-proxy's default 127.0.0.1:10249. Its embedded network policy controller is kube-router's.
const k3s = { healthzBindAddress: "127.0.0.1:10256", metricsBindAddress: "127.0.0.1:10249" };
const netpol = {
  ipsets: ["kube-router-netpol.ipset"],
  iptables: ["flannel.rules", "kube-router-netpol.rules"],
};

const ipvsState = ipvsNode(
  "192.168.50.21",
  kubeProxy("ipvs", "v1.33.5+k3s1", { ...k3s, ipvs: { scheduler: "rr" } }),
  { links: FLANNEL_LINKS, ...netpol },
);

export const profile: Profile = {
  id: "k3s-flannel",
  distribution: "k3s",
  plugins: ["Flannel (vxlan, k3s built-in)", "kube-router network policy controller (k3s built-in)"],
  title: "k3s with its built-in Flannel and kube-router netpol, kube-proxy-arg proxy-mode=ipvs then nftables",
  sources: [
    "test/profiles/profiles.md P6 (kube-proxy inside the k3s process: argsMap proxy-mode=iptables, healthz-bind-address=127.0.0.1, --kube-proxy-arg extras; KUBE-ROUTER-*/KUBE-NWPLCY-*/KUBE-POD-FW-* chains and KUBE-SRC-/KUBE-DST- ipsets are not kube-proxy's)",
    "test/fixtures/netfilter/sources/kube-router-netpol.rules, .ipset (cloudnativelabs/kube-router @7c2c2779 pkg/controllers/netpol)",
    "kube-router's chains and ipsets are not kube-proxy's",
    "version string form vX.Y.Z+k3sN: k3s release tags (the node's kubeletVersion); the agent must read it as 1.33",
  ],
  nodes: [
    {
      name: "k3s-ipvs",
      when: "before the switch: --kube-proxy-arg=proxy-mode=ipvs",
      state: ipvsState,
      expect: ipvsReady(),
      why: "FORWARD -> KUBE-ROUTER-FORWARD is kube-router's own jump, not a foreign rule in kube-proxy's chains; Flannel's links are no NodePort destinations",
    },
    {
      name: "k3s-nft",
      when: "after the switch: --kube-proxy-arg=proxy-mode=nftables, k3s restarted",
      state: nftablesNode("192.168.50.21", kubeProxy("nftables", "v1.33.5+k3s1", k3s), {
        links: FLANNEL_LINKS,
        ...netpol,
        afterSwitch: true,
      }),
      expect: nftablesAfterSwitch(),
      why: "the switch's own cleanup left the IPv6 proxier's 17 empty KUBE-6-* sets (it destroys the IPv4 names only): leftovers for the cleanup step, nothing broken; kube-router's KUBE-SRC-/KUBE-DST- ipsets and KUBE-ROUTER-/KUBE-NWPLCY-/KUBE-POD-FW- chains stay and are not leftovers: deleting them would drop the cluster's network policies",
    },
  ],
};
