import type { VirtualServer } from "../facts/ipvs.js";
import type { NodeFacts } from "../report/schema.js";
import { isServiceAddress } from "./kube-ipvs0.js";
import type { RuleOptions } from "./options.js";

// kube-router's service proxy (--run-service-proxy), from cloudnativelabs/kube-router @7c2c2779
// pkg/controllers/proxy: it binds every ClusterIP, externalIP and LoadBalancer IP onto the dummy link
// kube-dummy-if (linux_networking.go getKubeDummyInterface, ipAddrAdd; service_endpoints_sync.go
// setupClusterIPServices), never onto kube-ipvs0, puts NodePorts on the node's own address
// (setupNodePortServices), and keeps its firewall sets kube-router-svip (hash:ip) and kube-router-svip-prt
// (hash:ip,port), "inet6:"-prefixed for IPv6 (network_services_controller.go setupIpvsFirewall, utils.go
// getIPSetName). kube-proxy's ipvs mode always makes kube-ipvs0 and names its sets KUBE-*: the two do not
// look alike. kube-router's network-policy-only deployments (k3s) make neither the link nor these sets.

export const KUBE_ROUTER_LINK = "kube-dummy-if";
const KUBE_ROUTER_PROXY_SETS: ReadonlySet<string> = new Set(
  ["kube-router-svip", "kube-router-svip-prt"].flatMap((s) => [s, `inet6:${s}`]),
);
const KUBE_ROUTER_SERVICES_CHAIN = "KUBE-ROUTER-SERVICES";

/** A service proxy other than kube-proxy that programs IPVS on this node. */
export interface OtherServiceProxy {
  name: "kube-router";
  /** What says so: its link, its sets, its chain when the rules were read. */
  evidence: string[];
  /** The addresses on its link: the Service IPs it serves here. */
  serviceIps: string[];
  /** The IPVS virtual servers it made (otherProxyVirtualServers); empty when IPVS was not read. */
  virtualServers: VirtualServer[];
}

/**
 * kube-router's service proxy when both its link and its sets are seen; "absent" when a part that was
 * read shows one of them missing; null when neither says so and a part was not read: unread is never
 * "not kube-router", nor "kube-router".
 */
export function otherServiceProxy(
  f: Pick<NodeFacts, "addresses" | "ipsets" | "iptables" | "ipvs">,
  opts: Pick<RuleOptions, "nodePortRange">,
): OtherServiceProxy | "absent" | null {
  const link = f.addresses?.interfaces.find((i) => i.name === KUBE_ROUTER_LINK && i.kind === "dummy");
  const sets = f.ipsets?.sets.filter((s) => KUBE_ROUTER_PROXY_SETS.has(s.name));
  if ((f.addresses !== null && link === undefined) || (sets !== undefined && sets.length === 0))
    return "absent";
  if (link === undefined || sets === undefined) return null;
  const chains = (f.iptables?.backends ?? []).flatMap((b) =>
    b.read && b.kubeChains.some((c) => c.table === "filter" && c.name === KUBE_ROUTER_SERVICES_CHAIN)
      ? [`chain filter ${KUBE_ROUTER_SERVICES_CHAIN} in ${b.family} iptables (${b.backend})`]
      : [],
  );
  // kube-router brings its link up (linux_networking.go LinkSetUp), so the kernel adds an fe80:: to it.
  const serviceIps = link.addresses.map((a) => a.address).filter(isServiceAddress);
  return {
    name: "kube-router",
    evidence: [
      `dummy link ${KUBE_ROUTER_LINK} with ${serviceIps.length} Service addresses`,
      ...sets.map((s) => `ipset ${s.name} (${s.entries} entries)`),
      ...chains,
    ],
    serviceIps,
    virtualServers: madeBy(f, new Set(serviceIps), opts),
  };
}

/**
 * The virtual servers kube-router made: a Service IP on its link, or a NodePort (a port in the
 * NodePort range) on one of the node's own addresses. Anything else stays unexplained (keepalived,
 * kube-vip, a firewall-mark service, a leftover) and is judged as it would be without kube-router.
 */
function madeBy(
  f: Pick<NodeFacts, "ipvs" | "addresses">,
  serviceIps: ReadonlySet<string>,
  opts: Pick<RuleOptions, "nodePortRange">,
): VirtualServer[] {
  if (f.addresses === null) return [];
  const local = new Set(
    f.addresses.interfaces
      .filter((i) => i.name !== "kube-ipvs0" && i.name !== KUBE_ROUTER_LINK)
      .flatMap((i) => i.addresses.map((a) => a.address)),
  );
  const [lo, hi] = opts.nodePortRange;
  return (f.ipvs?.virtualServers ?? []).filter(
    (v) =>
      v.address !== null &&
      (serviceIps.has(v.address) ||
        (local.has(v.address) && v.port !== null && v.port >= lo && v.port <= hi)),
  );
}
