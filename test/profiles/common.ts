import type { Scenario } from "../standins/kube-proxy.js";
import type { Expected, Link, NodeState, RecordingSpec, VirtualServer } from "./profile.js";
import { nearestRelease, parseIpvsadmSave, readRecorded, realFile, recordedKubeIpvs0 } from "./recorded.js";

// What every kube-proxy profile shares: kubelet's chains (test/fixtures/netfilter/sources, each cited in
// its README) and kube-proxy's OWN state — ipvs mode's ipsets, chains, virtual servers and kube-ipvs0
// addresses, nftables mode's tables — as the REAL binary made it on that node (recorded.ts,
// record-kube-proxy.ts), never written by hand. A profile adds its plugin's state and kube-proxy's
// version and config on top.

/** The Services every profile serves (kube-proxy-cluster.ts): the kubernetes and kube-dns ClusterIPs,
 *  and ns1/svc1 (172.30.0.41:80 with a NodePort, 30080 unless the profile's range moves it). */
export const CLUSTER_IPS = ["10.96.0.1", "10.96.0.10", "172.30.0.41"];

/** What a profile changes in the Services its kube-proxy is recorded with, eth0's other addresses (a
 *  VIP), which the node has while kube-proxy runs, and the mode it is switched to after (`then`). */
export type RecordOptions = Partial<Pick<RecordingSpec, "nodePort" | "externalIP" | "then">> & {
  eth0?: string[];
};

const eth0 = (nodeIp: string, more: string[] = []): Link => ({
  name: "eth0",
  kind: "nic",
  addresses: [`${nodeIp}/16`, ...more],
});

/**
 * The KubeProxyConfiguration fields of a profile's config that change what the recording dumps: `ipvs`
 * and `nodePortAddresses`, less `ipvs.strictARP` (it only sets two sysctls, which a profile sets itself)
 * and `ipvs.scheduler: rr` (the default: pkg/proxy/ipvs/proxier.go NewProxier, `defaultScheduler`), so
 * nodes that differ in those only share one recording.
 */
function stateConfig(config: Scenario["config"]): Record<string, unknown> {
  const c = (config ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  if ("nodePortAddresses" in c) out.nodePortAddresses = c.nodePortAddresses;
  const { strictARP: _s, scheduler, ...ipvs } = (c.ipvs ?? {}) as Record<string, unknown>;
  if (scheduler !== undefined && scheduler !== "rr") ipvs.scheduler = scheduler;
  if (Object.keys(ipvs).length > 0) out.ipvs = ipvs;
  return out;
}

/** The real kube-proxy run that records this node's own state: its links (kube-ipvs0 is kube-proxy's
 *  to make), addresses, config and the profile's Services. */
export function recording(
  mode: RecordingSpec["mode"],
  nodeIp: string,
  kubeProxy: Pick<Scenario, "version" | "config">,
  links: Link[] = [],
  opts: RecordOptions & { nodeIps?: string[] } = {},
): RecordingSpec {
  return {
    mode,
    version: nearestRelease(kubeProxy.version),
    nodeIps: opts.nodeIps ?? [nodeIp],
    links: [eth0(nodeIp, opts.eth0), ...links].filter((l) => l.name !== "kube-ipvs0"),
    config: stateConfig(kubeProxy.config),
    nodePort: opts.nodePort ?? 30080,
    ...(opts.externalIP ? { externalIP: opts.externalIP } : {}),
    ...(opts.then ? { then: opts.then } : {}),
  };
}

/** kube-ipvs0 as the real binary left it on that node (never brought up: EnsureDummyDevice only adds it). */
export const kubeIpvs0 = recordedKubeIpvs0;

/** kube-proxy's virtual servers on that node, as `ipvsadm -Sn` read them after the real binary synced. */
export const kubeProxyVirtualServers = (spec: RecordingSpec): VirtualServer[] =>
  parseIpvsadmSave(readRecorded(spec, "ipvsadm.save"));

/**
 * ipvs mode's ipsets and iptables / ip6tables chains on that node. kube-proxy runs one proxier per family
 * whenever ip6tables works on the host (cmd/kube-proxy/app/server_linux.go: platformCheckSupported ->
 * dualStack -> ipvs.NewDualStackProxier), whatever the cluster's Services: the recordings hold the
 * IPv6 proxier's KUBE-6-* sets and chains too, and a node they are left on has them too.
 */
export const ipvsIpsets = (spec: RecordingSpec) => [realFile(spec, "ipset.save")];
export const ipvsIptables = (spec: RecordingSpec) => [realFile(spec, "iptables.save")];
export const ipvsIp6tables = (spec: RecordingSpec) => [realFile(spec, "ip6tables.save")];

/**
 * iptables mode's chains in both families on that node, as the real binary made them (iptables-nft, the
 * host's backend). It runs one proxier per family whenever ip6tables works (server_linux.go, as for ipvs
 * mode), so the IPv6 KUBE-* chains are there too. From v1.33 KUBE-NODEPORTS' localhost rule counts with
 * `-m nfacct` (pkg/proxy/iptables/proxier.go, the localhost NodePort counters): buildInNetns adds the
 * counters the rules name first, as kube-proxy's own nfacct client does before its first sync.
 */
export const iptablesModeIptables = (spec: RecordingSpec) => [realFile(spec, "iptables-nft.save")];
export const iptablesModeIp6tables = (spec: RecordingSpec) => [realFile(spec, "ip6tables-nft.save")];

type Extra = Partial<NodeState> & {
  record?: RecordOptions;
  /** nftables nodes switched from ipvs mode: what the real binary's switch left (SWITCHED) is there too. */
  afterSwitch?: boolean;
};

/** A node in kube-proxy ipvs mode (UML: IPVS and kube-ipvs0 are real there); `extra.ipvs` are virtual
 *  servers of someone else's, beside kube-proxy's own. */
export function ipvsNode(nodeIp: string, kubeProxy: Scenario, extra: Extra = {}): NodeState {
  const { record, ...rest } = extra;
  const spec = recording("ipvs", nodeIp, kubeProxy, rest.links, { ...record, nodeIps: rest.nodeIps });
  return {
    kernel: "uml",
    ...rest,
    links: [eth0(nodeIp, record?.eth0), kubeIpvs0(spec), ...(rest.links ?? [])],
    ipsets: [...ipvsIpsets(spec), ...(rest.ipsets ?? [])],
    iptables: ["kubelet.rules", ...ipvsIptables(spec), ...(rest.iptables ?? [])],
    ip6tables: ["kubelet6.rules", ...ipvsIp6tables(spec), ...(rest.ip6tables ?? [])],
    ipvs: [...kubeProxyVirtualServers(spec), ...(rest.ipvs ?? [])],
    kubeProxy,
    nodeIps: rest.nodeIps ?? [nodeIp],
    recordings: [spec],
  };
}

/** A node in kube-proxy nftables mode (netns: the host kernel has ip-family nftables): both tables. */
export function nftablesNode(nodeIp: string, kubeProxy: Scenario, extra: Extra = {}): NodeState {
  const { record, afterSwitch, ...rest } = extra;
  const spec = recording("nftables", nodeIp, kubeProxy, rest.links, { ...record, nodeIps: rest.nodeIps });
  const before = afterSwitch ? SWITCHED : null;
  const left = (f: string) => (before ? [realFile(before, f)] : []);
  return {
    kernel: "netns",
    ...rest,
    links: [eth0(nodeIp, record?.eth0), ...(rest.links ?? [])],
    ipsets: [...left("ipset.after.save"), ...(rest.ipsets ?? [])],
    nft: [realFile(spec, "nft-ip.nft"), realFile(spec, "nft-ip6.nft"), ...(rest.nft ?? [])],
    iptables: ["kubelet.rules", ...left("iptables.after.save"), ...(rest.iptables ?? [])],
    ip6tables: ["kubelet6.rules", ...left("ip6tables.after.save"), ...(rest.ip6tables ?? [])],
    kubeProxy,
    nodeIps: rest.nodeIps ?? [nodeIp],
    recordings: [spec, ...(before ? [before] : []), ...(rest.recordings ?? [])],
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

/**
 * A node switched from ipvs mode that kube-proxy answers nftables on: what the switch's own cleanup
 * leaves (the IPv6 proxier's 17 KUBE-6-* sets, SWITCHED) is there until the operator's cleanup step
 * ("ipset list -name | grep -c '^KUBE-' # want 0" in the deprecation guide; KEP-2448: cleanup is
 * something you do, not something that happens): leftovers, nothing broken.
 */
export const nftablesAfterSwitch = (waitsFor?: string): Expected => ({
  phase: "nftables",
  phaseSource: "proxyMode",
  verdict: "leftovers",
  findings: ["kube-ipsets-left"],
  evidence: { "kube-ipsets-left": { ipv6Sets: 17 } },
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

/**
 * The switch from ipvs to nftables mode, recorded once with the real binary (kubeadm-calico-ipvs's node,
 * `then: "nftables"`): what its start-up cleanup (ipvs.CleanupLeftovers) leaves is loaded on every
 * "after the switch" node. It deletes by fixed names whatever the node held, so what it leaves does
 * not depend on the node's Services or addresses (the same cleanup code in v1.31.14 to v1.37.2:
 * pkg/proxy/ipvs/cleanup.go).
 */
export const SWITCHED = recording("ipvs", "172.18.0.10", { version: "v1.34.3", config: {} }, CALICO_LINKS, {
  then: "nftables",
});
