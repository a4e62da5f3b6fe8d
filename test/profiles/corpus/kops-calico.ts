import {
  CALICO_LINKS,
  ipvsNode,
  ipvsReady,
  kubeProxy,
  nftablesAfterSwitch,
  nftablesNode,
} from "../common.js";
import type { Profile } from "../profile.js";

// kOps with spec.kubeAPIServer.serviceNodePortRange 40000-40100: the NodePort lives outside the default
// range, in kube-proxy's KUBE-NODE-PORT-TCP ipset (svc1's NodePort is 40080 in the recording).

const ipvsState = ipvsNode("172.20.33.14", kubeProxy("ipvs", "v1.33.5", { ipvs: { scheduler: "rr" } }), {
  links: CALICO_LINKS,
  ipsets: ["calico.ipset"],
  iptables: ["calico-iptables.rules"],
  record: { nodePort: 40080 },
  nodePortRange: "40000-40100",
});

export const profile: Profile = {
  id: "kops-calico",
  distribution: "kOps (AWS, Ubuntu 24.04)",
  plugins: ["Calico (iptables dataplane)"],
  title: "kOps cluster with a custom NodePort range and Calico, kube-proxy static pods in ipvs mode",
  sources: [
    "test/profiles/profiles.md P5 (spec.kubeProxy.proxyMode; kube-proxy as static pods, kops PR #10115)",
    "NodePorts are learned from the node's KUBE-NODE-PORT-* ipsets; a custom --service-node-port-range is accepted",
    "test/fixtures/netfilter/sources/calico-iptables.rules, calico.ipset",
  ],
  nodes: [
    {
      name: "kops-ipvs",
      when: "before the switch: NodePort 40080 from a custom range, kube-proxy v1.33 ipvs",
      state: ipvsState,
      expect: ipvsReady(),
      why: "the virtual server on :40080 is kube-proxy's own NodePort, not a foreign IPVS user",
    },
    {
      name: "kops-nft",
      when: "after the switch: spec.kubeProxy.proxyMode nftables, rolling update done",
      state: nftablesNode("172.20.33.14", kubeProxy("nftables", "v1.33.5"), {
        links: CALICO_LINKS,
        ipsets: ["calico.ipset"],
        iptables: ["calico-iptables.rules"],
        nodePortRange: "40000-40100",
        record: { nodePort: 40080 },
        afterSwitch: true,
      }),
      expect: nftablesAfterSwitch(),
      why: "the switch's own cleanup left the IPv6 proxier's 17 empty KUBE-6-* sets (it destroys the IPv4 names only): leftovers for the cleanup step, nothing broken",
    },
  ],
};
