import type { IptablesBackendRead } from "../facts/netfilter.js";
import type { NodeFacts } from "../report/schema.js";
import { sysctlValue } from "../facts/host.js";

// State a "before the switch" check sees but does not count, each with why: the CNI's, the container
// runtime's or kube-proxy's own, which no person has to act on. Rules filter by these; the view lists
// them so a report still says what was seen.

export interface NotCounted {
  /** The finding id whose check saw it. */
  check:
    "nodeport-addresses-shrink" | "host-firewall-needs-nodeport-range" | "conntrack-workaround-relied-on";
  seen: string;
  why: string;
}

interface InterfaceKind {
  test: (name: string, kind: string | null) => boolean;
  why: string;
}

// Interfaces whose addresses no NodePort client uses, from each plugin's own source. Pods reach Services by
// ClusterIP; NodePort clients come from outside the node, to the node's own (primary) addresses.
const NOT_NODEPORT_DESTINATIONS: readonly InterfaceKind[] = [
  {
    // containernetworking/plugins plugins/main/bridge/bridge.go: defaultBrName = "cni0" (Flannel's and k3s's pod bridge).
    test: (n) => n === "cni0",
    why: "the CNI bridge plugin's pod bridge (gateway of this node's pod CIDR)",
  },
  {
    // flannel-io/flannel pkg/backend/vxlan: name fmt.Sprintf("flannel.%v", cfg.VNI); wireguard backend flannel-wg(-v6).
    test: (n) => /^flannel[.-]/.test(n),
    why: "Flannel's overlay device (holds an address of the pod network)",
  },
  {
    // projectcalico/calico felix dataplane_defs.go VXLANIfaceNameV4/V6 = "vxlan.calico"/"vxlan-v6.calico";
    // IPIP uses the kernel's tunl0; WireGuard wireguard.cali / wg-v6.cali; workload veths cali*.
    test: (n) =>
      n === "vxlan.calico" || n === "vxlan-v6.calico" || n === "wireguard.cali" || n === "wg-v6.cali",
    why: "Calico's tunnel device (holds its pod-network tunnel address)",
  },
  {
    test: (n, k) => n === "tunl0" && (k === "ipip" || k === null),
    why: "the IPIP tunnel Calico uses (pod-network tunnel address)",
  },
  { test: (n) => n.startsWith("cali"), why: "a Calico workload veth (the host side of a pod's interface)" },
  {
    // cilium/cilium pkg/defaults/node.go: HostDevice "cilium_host", SecondHostDevice "cilium_net", cilium_vxlan/geneve/ipip4.
    test: (n) => n.startsWith("cilium_") || n.startsWith("lxc"),
    why: "Cilium's own device (router address of the pod network, or a pod's veth)",
  },
  {
    // cloudnativelabs/kube-router pkg/controllers/proxy/network_services_controller.go (KubeDummyIf,
    // "kube-bridge"): the service proxy's dummy holds Service VIPs; the bridge is its pod gateway.
    test: (n) => n === "kube-dummy-if",
    why: "kube-router's service-proxy dummy: it holds Service VIPs, not node addresses",
  },
  { test: (n) => n === "kube-bridge", why: "kube-router's pod bridge (gateway of this node's pod CIDR)" },
  {
    // moby libnetwork/drivers/bridge: default bridge docker0; user networks "br-" + the network id's first 12 hex digits.
    test: (n, k) => n === "docker0" || (/^br-[0-9a-f]{12}$/.test(n) && (k === "bridge" || k === null)),
    why: "a Docker bridge (gateway of a container network on this host)",
  },
  {
    // kubernetes/dns cmd/node-cache: -interfacename default "nodelocaldns", a dummy holding 169.254.20.10
    // (and, in iptables-mode setups, the kube-dns ClusterIP).
    test: (n) => n === "nodelocaldns",
    why: "NodeLocal DNSCache's dummy: it holds the DNS cache's link-local address and the kube-dns ClusterIP",
  },
];

/** IPv4 link-local 169.254.0.0/16 (RFC 3927): never routed to the node from outside, whatever the scope says. */
function linkLocal4(address: string): boolean {
  return address.startsWith("169.254.");
}

interface NodePortAddressClasses {
  /** "address (interface)" of every non-primary global address a NodePort client may use. */
  counted: string[];
  notCounted: NotCounted[];
}

/** One of the node's own addresses and the interface it is on. */
export interface NodeAddress {
  address: string;
  family: "inet" | "inet6";
  interface: string;
}

/**
 * Why no NodePort client uses this address (a CNI's, Docker's, a DNS cache's, link-local), or null when one
 * may. The one judgement nodeport-addresses-shrink and verify's NodePort line share.
 */
function notNodePortDestination(
  iface: { name: string; kind: string | null },
  address: string,
): string | null {
  const kind = NOT_NODEPORT_DESTINATIONS.find((k) => k.test(iface.name, iface.kind));
  return kind?.why ?? (linkLocal4(address) ? "an IPv4 link-local address (169.254.0.0/16)" : null);
}

/**
 * The node's global addresses (kube-ipvs0 and lo aside: they hold Service IPs and loopback), split into
 * those NodePort clients may use and those of the pod network, containers, Service VIPs or a DNS cache.
 * An address a NodePort virtual server carries connections on is counted whatever its interface: traffic
 * says someone uses it. Primaries are counted unless `withPrimaries` is false.
 */
export function nodePortDestinations(
  addresses: NonNullable<NodeFacts["addresses"]>,
  primaries: ReadonlySet<string>,
  busy: ReadonlySet<string>,
  withPrimaries = true,
): { counted: NodeAddress[]; notCounted: (NodeAddress & { why: string })[] } {
  const counted: NodeAddress[] = [];
  const notCounted: (NodeAddress & { why: string })[] = [];
  for (const i of addresses.interfaces) {
    if (i.name === "kube-ipvs0" || i.name === "lo") continue;
    for (const a of i.addresses) {
      if (a.scope !== "global") continue;
      const at: NodeAddress = { address: a.address, family: a.family, interface: i.name };
      if (primaries.has(a.address)) {
        if (withPrimaries) counted.push(at);
        continue;
      }
      const why = notNodePortDestination(i, a.address);
      if (why === null || busy.has(a.address)) counted.push(at);
      else notCounted.push({ ...at, why });
    }
  }
  return { counted, notCounted };
}

/** The non-primary addresses of nodePortDestinations, as nodeport-addresses-shrink reports them. */
export function classifyNodePortAddresses(
  addresses: NonNullable<NodeFacts["addresses"]>,
  primaries: ReadonlySet<string>,
  busy: ReadonlySet<string>,
): NodePortAddressClasses {
  const d = nodePortDestinations(addresses, primaries, busy, false);
  return {
    counted: d.counted.map((a) => `${a.address} (${a.interface})`),
    notCounted: d.notCounted.map((n) => ({
      check: "nodeport-addresses-shrink",
      seen: `${n.address} (${n.interface})`,
      why: `${n.why}; no NodePort client uses it, and no NodePort virtual server on it carries connections`,
    })),
  };
}

// moby libnetwork/drivers/bridge setup_ip_forwarding.go (setupIPForwarding) and internal/iptabler
// FilterForwardDrop: when Docker itself turns ip_forward on it sets the filter FORWARD policy to DROP
// (unless --ip-forward-no-drop), and its bridge driver creates DOCKER-USER, DOCKER-FORWARD, DOCKER, ... in filter.
export function dockerSetForwardDrop(b: IptablesBackendRead): boolean {
  return b.policies["filter/FORWARD"] === "DROP" && (b.dockerChains ?? []).length > 0;
}

export const DOCKER_FORWARD_DROP_WHY =
  "Docker's own policy: dockerd sets FORWARD to DROP when it enables ip_forward (moby setupIPForwarding), and its chains are here; it is no host firewall that NodePorts must be opened in (whether it drops forwarded Service traffic after the switch is forward-drop-at-switch's judgement)";

const KUBE_PROXY_BE_LIBERAL_WHY =
  "kube-proxy's own setting: its config has conntrack.tcpBeLiberal: true (/configz), so kube-proxy sets the sysctl itself and keeps setting it in nftables mode";

type VirtualServer = NonNullable<NodeFacts["ipvs"]>["virtualServers"][number];

/** The node's primary addresses, as nftables mode's `nodePortAddresses: primary` keeps them. */
export function primaryAddresses(a: NonNullable<NodeFacts["addresses"]>): Set<string> {
  return new Set([a.primary.ipv4, a.primary.ipv6].filter((x): x is string => x !== null));
}

/** Addresses a NodePort virtual server carries connections on. */
export function busyAddresses(nodePorts: readonly VirtualServer[]): Set<string> {
  return new Set(
    nodePorts
      .filter((v) => v.address !== null && v.activeConns + v.inactiveConns > 0)
      .map((v) => v.address as string),
  );
}

/** Everything the before-the-switch checks saw and did not count, for the report. */
export function notCounted(f: NodeFacts, nodePorts: readonly VirtualServer[]): NotCounted[] {
  const out: NotCounted[] = [];
  if (f.addresses)
    out.push(
      ...classifyNodePortAddresses(f.addresses, primaryAddresses(f.addresses), busyAddresses(nodePorts))
        .notCounted,
    );
  for (const b of f.iptables?.backends ?? [])
    if (b.read && dockerSetForwardDrop(b))
      out.push({
        check: "host-firewall-needs-nodeport-range",
        seen: `${b.family} ${b.backend} filter/FORWARD policy DROP`,
        why: DOCKER_FORWARD_DROP_WHY,
      });
  if (beLiberalByKubeProxy(f))
    out.push({
      check: "conntrack-workaround-relied-on",
      seen: "net.netfilter.nf_conntrack_tcp_be_liberal = 1",
      why: KUBE_PROXY_BE_LIBERAL_WHY,
    });
  return out;
}

/** The sysctl is 1 and kube-proxy's effective config is what sets it (KubeProxyConntrackConfiguration.TCPBeLiberal). */
function beLiberalByKubeProxy(f: Pick<NodeFacts, "sysctls" | "configz">): boolean {
  const v = sysctlValue(f.sysctls, "net.netfilter.nf_conntrack_tcp_be_liberal");
  return v === "1" && f.configz?.conntrackTcpBeLiberal === true;
}
