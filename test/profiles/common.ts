import type { Scenario } from "../standins/kube-proxy.js";
import type { Expected, Link, NodeState, VirtualServer } from "./profile.js";

// What every kube-proxy profile shares, composed from the fixtures in test/fixtures/netfilter/sources
// (each cited in its README): kubelet's chains, kube-proxy's ipvs-mode ipsets, chains, kube-ipvs0 and
// virtual servers, and its nftables-mode tables. A profile adds its plugin's state and kube-proxy's
// version and config on top.

/** The Services every ipvs node here serves: the kubernetes and kube-dns ClusterIPs, plus the one the
 *  ipvs-mode.ipset fixture holds (ns1/svc1, 172.30.0.41:80 with NodePort 30080). */
export const CLUSTER_IPS = ["10.96.0.1", "10.96.0.10", "172.30.0.41"];

/** kube-ipvs0 as kube-proxy leaves it: a dummy link holding every ClusterIP as a /32, never brought up
 *  (pkg/proxy/ipvs/util/netlink_linux.go EnsureDummyDevice only adds it; a link up would also get an
 *  fe80:: address kube-proxy never put there). */
export const kubeIpvs0 = (addresses = CLUSTER_IPS): Link => ({
  name: "kube-ipvs0",
  kind: "dummy",
  addresses: addresses.map((a) => `${a}/32`),
  up: false,
});

/** kube-proxy's virtual servers for those Services (Masq, weight 1, rr), and the NodePort on nodeIp. */
export function kubeProxyVirtualServers(nodeIp: string, nodePort = 30080, scheduler = "rr"): VirtualServer[] {
  return [
    {
      proto: "tcp",
      address: "10.96.0.1",
      port: 443,
      scheduler,
      reals: [{ address: nodeIp, port: 6443 }],
    },
    {
      proto: "udp",
      address: "10.96.0.10",
      port: 53,
      scheduler,
      reals: [
        { address: "10.244.1.2", port: 53 },
        { address: "10.244.2.3", port: 53 },
      ],
    },
    {
      proto: "tcp",
      address: "172.30.0.41",
      port: 80,
      scheduler,
      reals: [{ address: "10.244.1.5", port: 8080 }],
    },
    {
      proto: "tcp",
      address: nodeIp,
      port: nodePort,
      scheduler,
      reals: [{ address: "10.244.1.5", port: 8080 }],
    },
  ];
}

/** The ipset members those Services add (the fixture holds ns1/svc1 and NodePort 30080 already). */
export const KUBE_PROXY_IPSET_LINES = [
  'add KUBE-CLUSTER-IP 10.96.0.1,tcp:443 comment "default/kubernetes:https"',
  'add KUBE-CLUSTER-IP 10.96.0.10,udp:53 comment "kube-system/kube-dns:dns"',
];

/**
 * ipvs mode's ipsets and ip6tables rules on an IPv4-only cluster. kube-proxy runs one proxier per family
 * whenever ip6tables works on the host (cmd/kube-proxy/app/server_linux.go: platformCheckSupported ->
 * dualStack -> ipvs.NewDualStackProxier), whatever the cluster's Services: the IPv6 one creates every
 * KUBE-6-* set (empty) and its chains and rules (UF §c; test/fixtures/netfilter/sources/*6*), and
 * kubelet its IPv6 canaries. So every ipvs node here has them, and every one left behind has them too.
 */
export const IPVS_IPSETS = ["ipvs-mode.ipset", "ipvs-mode6.ipset"];
export const IPVS_IP6TABLES = ["kubelet6.rules", "kube-proxy-ipvs-mode6.rules"];

/** A node in kube-proxy ipvs mode (UML: IPVS and kube-ipvs0 are real there). */
export function ipvsNode(nodeIp: string, kubeProxy: Scenario, extra: Partial<NodeState> = {}): NodeState {
  return {
    kernel: "uml",
    ...extra,
    links: [{ name: "eth0", kind: "nic", addresses: [`${nodeIp}/16`] }, kubeIpvs0(), ...(extra.links ?? [])],
    ipsets: [...IPVS_IPSETS, ...(extra.ipsets ?? [])],
    ipsetLines: [...KUBE_PROXY_IPSET_LINES, ...(extra.ipsetLines ?? [])],
    iptables: ["kubelet.rules", "kube-proxy-ipvs-mode.rules", ...(extra.iptables ?? [])],
    ip6tables: [...IPVS_IP6TABLES, ...(extra.ip6tables ?? [])],
    ipvs: extra.ipvs ?? kubeProxyVirtualServers(nodeIp),
    kubeProxy,
    nodeIps: extra.nodeIps ?? [nodeIp],
  };
}

/** A node in kube-proxy nftables mode (netns: the host kernel has ip-family nftables): both tables. */
export function nftablesNode(nodeIp: string, kubeProxy: Scenario, extra: Partial<NodeState> = {}): NodeState {
  return {
    kernel: "netns",
    ...extra,
    links: [{ name: "eth0", kind: "nic", addresses: [`${nodeIp}/16`] }, ...(extra.links ?? [])],
    nft: ["kube-proxy-nft-v1.34-ip.nft", "kube-proxy-nft-v1.33-ip6.nft", ...(extra.nft ?? [])],
    iptables: ["kubelet.rules", ...(extra.iptables ?? [])],
    ip6tables: ["kubelet6.rules", ...(extra.ip6tables ?? [])],
    kubeProxy,
    nodeIps: extra.nodeIps ?? [nodeIp],
  };
}

/** kube-proxy answering healthily: synced 3 s ago. */
export function kubeProxy(
  mode: Scenario["mode"],
  version: string,
  config: Scenario["config"] = {},
  rest: Partial<Scenario> = {},
): Scenario {
  return { mode, version, lastSync: { agoSeconds: 3 }, healthy: true, config, ...rest };
}

/** Flannel's links on a node holding lease 10.42.0.0/24 of network 10.42.0.0/16 (flannel.rules: k3s's
 *  defaults; a kubeadm cluster would use its own pod CIDR, which changes no verdict). */
export const FLANNEL_LINKS: Link[] = [
  { name: "flannel.1", kind: "vxlan", addresses: ["10.42.0.0/32"] },
  { name: "cni0", kind: "bridge", addresses: ["10.42.0.1/24"] },
];

/** Docker's default bridge (docker.rules). */
export const DOCKER_LINK: Link = { name: "docker0", kind: "bridge", addresses: ["172.17.0.1/16"] };

/** NodeLocal DNSCache's dummy link (nodelocaldns.rules). */
export const NODELOCALDNS_LINK: Link = {
  name: "nodelocaldns",
  kind: "dummy",
  addresses: ["169.254.20.10/32"],
};

/** Calico in VXLAN mode: its tunnel device, with this node's block's first address. */
export const CALICO_LINKS: Link[] = [{ name: "vxlan.calico", kind: "vxlan", addresses: ["192.168.12.0/32"] }];

/** Cilium's host-side pair (cilium_host holds the router IP) and its tunnel. */
export const CILIUM_LINKS: Link[] = [
  { name: "cilium_host", kind: "veth", peer: "cilium_net", addresses: ["10.0.1.164/32"] },
  { name: "cilium_vxlan", kind: "vxlan" },
];

/** An ipvs node with nothing in the way: ready, only the deprecation (info before 1.35, then a warning
 *  that the verdict does not count). */
// ipvs-timeouts-set (info) at the defaults too: IPVS cuts idle established TCP after 900 s (the node's own
// `ipvsadm -L --timeout`), conntrack keeps it for nf_conntrack_tcp_timeout_established (432000 s on the UML
// kernel, which no kube-proxy stand-in sets): the switch changes that for every ipvs node, read on both sides.
export const ipvsReady = (waitsFor?: string): Expected => ({
  phase: "ipvs",
  phaseSource: "proxyMode",
  verdict: "ready",
  findings: ["ipvs-mode-deprecated", "ipvs-timeouts-set"],
  ...(waitsFor === undefined ? {} : { waitsFor }),
});

/** A node kube-proxy answers nftables on, with nothing left and nothing broken. */
export const nftablesClean = (waitsFor?: string): Expected => ({
  phase: "nftables",
  phaseSource: "proxyMode",
  verdict: "clean",
  findings: [],
  ...(waitsFor === undefined ? {} : { waitsFor }),
});
