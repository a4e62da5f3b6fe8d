import { BlockList, isIPv6 } from "node:net";
import type { VirtualServer } from "../facts/ipvs.js";
import { ipv6IpsetName, KUBE_PROXY_IPSETS } from "../facts/owners.js";
import type { NodeFacts } from "../report/schema.js";
import { kubeIpvs0ServiceIps } from "./kube-ipvs0.js";
import type { RuleOptions } from "./options.js";

export interface VirtualServerClasses {
  /** Service IPs (ClusterIP, externalIP, LoadBalancer IP): ipvs mode binds each onto kube-ipvs0. */
  services: VirtualServer[];
  /**
   * kube-proxy's NodePort virtual servers: a local address with a port its NodePort sets hold, or — where
   * those sets were not read for that family and protocol — a port in the NodePort range (`nodePortsGuessed`).
   */
  nodePorts: VirtualServer[];
  /** The part of `nodePorts` taken for NodePorts by the port range alone: a guess, never proof. */
  nodePortsGuessed: VirtualServer[];
  /** Another service proxy's (kube-router's, view/other-proxy.ts): live Services, never kube-proxy's nor foreign. */
  otherProxy: VirtualServer[];
  /** Everything else: someone else's (keepalived, kube-vip, a firewall-mark service). */
  foreign: VirtualServer[];
}

/**
 * The NodePorts the node itself holds, whatever range the API server hands them from: kube-proxy's
 * KUBE-NODE-PORT-* ipsets (ipvs mode) and its nftables NodePort maps.
 */
function learnedNodePorts(f: NodeFacts): Set<string> {
  return new Set([
    ...(f.ipsets?.nodePorts ?? []),
    ...(f.nftables?.kubeProxy ?? []).flatMap((t) => t.nodePorts ?? []),
  ]);
}

/** ipvs mode's NodePort sets for a virtual server's family and protocol, by their names on the node. */
export function nodePortSetNames(family: VirtualServer["family"], protocol: string): readonly string[] {
  // From the one list of kube-proxy's ipsets (facts/owners.ts), the older bitmap SCTP set included: a node
  // upgraded since may still hold it. Today's ipvs mode creates its current ones on each sync (proxier.go
  // syncProxyRules ensures all of ipsetInfo), empty or not; the IPv6 proxier's are the KUBE-6- twins.
  return KUBE_PROXY_IPSETS.filter((s) => s.nodePorts === protocol).map((s) =>
    family === "inet6" ? ipv6IpsetName(s.name) : s.name,
  );
}

/**
 * Whether kube-proxy's ipvs-mode NodePort set for this virtual server's family and protocol was read, members
 * included: then membership decides. Only ipvs mode's sets can, because they describe the IPVS table kube-proxy
 * made; nftables mode's service-nodeports map names the Services it serves now, so a port there is a NodePort
 * but a port missing there may be ipvs mode's leftover of a Service deleted since.
 */
function membershipRead(f: NodeFacts, v: VirtualServer): boolean {
  if (f.ipsets === null || f.ipsets.nodePorts == null) return false;
  const names = nodePortSetNames(v.family, v.protocol);
  return f.ipsets.sets.some((s) => s.kubeProxy && names.includes(s.name));
}

/** kube-proxy's `ipvs.excludeCIDRs` (from /configz): addresses its ipvs mode leaves alone, so not its own. */
function excludedBy(f: NodeFacts): (address: string) => boolean {
  const cidrs = f.configz?.ipvs.excludeCIDRs ?? [];
  if (cidrs.length === 0) return () => false;
  const list = new BlockList();
  for (const c of cidrs) {
    const [net, len] = c.split("/");
    const type = isIPv6(net ?? "") ? "ipv6" : "ipv4";
    // A malformed entry excludes nothing: kube-proxy refuses to start with one (validation), so none is read.
    try {
      list.addSubnet(net ?? "", Number(len ?? (type === "ipv6" ? 128 : 32)), type);
    } catch {
      continue;
    }
  }
  return (a) => list.check(a, isIPv6(a) ? "ipv6" : "ipv4");
}

/**
 * Splits the IPVS table by owner. Needs kube-ipvs0's addresses to know the Service IPs; without them
 * (probe failed) nothing is called foreign, because a wrong accusation is worse than silence.
 */
export function classifyVirtualServers(
  f: NodeFacts,
  opts: RuleOptions,
  others: readonly VirtualServer[] = [],
): VirtualServerClasses {
  const out: VirtualServerClasses = {
    services: [],
    nodePorts: [],
    nodePortsGuessed: [],
    otherProxy: [],
    foreign: [],
  };
  const vs = f.ipvs?.virtualServers ?? [];
  if (vs.length === 0 || f.kubeIpvs0 === null || f.addresses === null) return out;
  const theirs = new Set(others);
  const serviceIPs = new Set(kubeIpvs0ServiceIps(f.kubeIpvs0));
  const local = new Set(
    f.addresses.interfaces
      .filter((i) => i.name !== "kube-ipvs0")
      .flatMap((i) => i.addresses.map((a) => a.address)),
  );
  const [lo, hi] = opts.nodePortRange;
  const learned = learnedNodePorts(f);
  const excluded = excludedBy(f);
  for (const v of vs) {
    if (v.address !== null && serviceIPs.has(v.address)) out.services.push(v);
    else if (theirs.has(v)) out.otherProxy.push(v);
    else if (v.address === null || v.port === null || !local.has(v.address)) out.foreign.push(v);
    else if (learned.has(`${v.protocol}:${v.port}`)) out.nodePorts.push(v);
    else if (excluded(v.address) || membershipRead(f, v)) out.foreign.push(v);
    else if (v.port >= lo && v.port <= hi) {
      out.nodePorts.push(v);
      out.nodePortsGuessed.push(v);
    } else out.foreign.push(v);
  }
  return out;
}
