import { FLANNEL_LINKS, ipvsNode, ipvsReady, kubeProxy } from "../common.js";
import type { NodeState, Profile } from "../profile.js";

// kubernetes/kubernetes#72779: kubeadm-style nodes in 192.168.10.0/24, Flannel, kube-proxy in ipvs mode,
// a Service with `externalIPs: [192.168.10.201]` from the nodes' own network and nothing announcing it:
// non-Kubernetes hosts on the segment reached it only because every node answered ARP for the
// kube-ipvs0 address (arp_ignore=0). nftables mode binds no Service IP, so it goes dark at the switch.
const NODE_IP = "192.168.10.1";
const EXTERNAL_IP = "192.168.10.201";

// web/test: ClusterIP 10.96.0.20 with that externalIP, its endpoint a Flannel pod (the real binary puts
// both on kube-ipvs0 and gives each its virtual server).
function node(strictARP: boolean): NodeState {
  return ipvsNode(NODE_IP, kubeProxy("ipvs", "v1.34.3", { ipvs: { scheduler: "rr", strictARP } }), {
    links: FLANNEL_LINKS,
    iptables: ["flannel.rules"],
    record: { externalIP: { address: EXTERNAL_IP, clusterIP: "10.96.0.20", endpoint: "10.42.0.7" } },
    // kube-proxy sets these itself when strictARP is on (pkg/proxy/ipvs/proxier.go NewProxier); the
    // recording's namespace is not the node's, so the profile sets them as the binary would.
    ...(strictARP
      ? { sysctls: { "net.ipv4.conf.all.arp_ignore": "1", "net.ipv4.conf.all.arp_announce": "2" } }
      : {}),
  });
}

export const profile: Profile = {
  id: "kubeadm-externalips-arp",
  distribution: "kubeadm (bare metal, one L2 segment)",
  plugins: ["Flannel (vxlan)"],
  title:
    "kubeadm + Flannel, a Service externalIP in the nodes' own subnet, reached only by the nodes' ARP answers",
  sources: [
    "kubernetes/kubernetes#72779 (externalIPs: [192.168.10.201] in the nodes' 192.168.10.0/24, IPVS, flannel: 'non-Kubernetes hosts cannot resolve service IPs via ARP' once arp_ignore=1)",
    "kubernetes/kubernetes#59976 ('each node in the cluster will respond to ARP requests'), metallb/metallb#637 (IPVS needed no MetalLB for this)",
    "kubernetes/kubernetes pkg/proxy/ipvs/proxier.go (Service IPs bound to kube-ipvs0; strictARP sets arp_ignore=1, arp_announce=2), read on master",
    "test/profiles/profiles.md P1 (kubeadm, Flannel)",
  ],
  nodes: [
    {
      name: "extip-arp-ipvs",
      when: "before the switch: kube-proxy v1.34 in ipvs mode, strictARP off, no MetalLB / kube-vip",
      state: node(false),
      expect: {
        phase: "ipvs",
        phaseSource: "proxyMode",
        verdict: "attention",
        findings: ["ipvs-mode-deprecated", "ipvs-timeouts-set", "service-ips-answered-by-arp"],
        evidence: {
          "service-ips-answered-by-arp": {
            serviceIpsOnLink: [`${EXTERNAL_IP} (in eth0's ${NODE_IP}/16)`],
            "net.ipv4.conf.all.arp_ignore": "0",
          },
        },
      },
      why: "192.168.10.201 lies in eth0's prefix and only kube-ipvs0's ARP answers make it reachable from the segment; nftables mode answers none, so unless an announcer is deployed first the IP goes dark: attention, not blocked (the agent cannot see an announcer). The ClusterIPs are in no node prefix and are not counted",
    },
    {
      name: "extip-strictarp-ipvs",
      when: "before the switch: the same cluster with strictARP on, as MetalLB's L2 mode requires with ipvs",
      state: node(true),
      expect: ipvsReady(),
      why: "with arp_ignore=1 the node never answered ARP for kube-ipvs0's addresses, so whatever reaches 192.168.10.201 today is an announcer (MetalLB) that outlives the switch: nothing to do",
    },
  ],
};
