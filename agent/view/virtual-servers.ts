import type { VirtualServer } from "../facts/ipvs.js";
import type { NodeFacts } from "../report/schema.js";
import { kubeIpvs0ServiceIps } from "./kube-ipvs0.js";
import type { RuleOptions } from "./options.js";

export interface VirtualServerClasses {
  /** Service IPs (ClusterIP, externalIP, LoadBalancer IP): ipvs mode binds each onto kube-ipvs0. */
  services: VirtualServer[];
  /** A local address with a port in the NodePort range: ipvs mode's NodePort virtual servers. */
  nodePorts: VirtualServer[];
  /** Another service proxy's (kube-router's, view/other-proxy.ts): live Services, never kube-proxy's nor foreign. */
  otherProxy: VirtualServer[];
  /** Everything else: someone else's (keepalived, kube-vip, a firewall-mark service). */
  foreign: VirtualServer[];
}

/**
 * The NodePorts the node itself holds, whatever range the API server hands them from: kube-proxy's
 * KUBE-NODE-PORT-* ipsets (ipvs mode) and its nftables NodePort maps.
 */
export function learnedNodePorts(f: NodeFacts): Set<string> {
  return new Set([
    ...(f.ipsets?.nodePorts ?? []),
    ...(f.nftables?.kubeProxy ?? []).flatMap((t) => t.nodePorts ?? []),
  ]);
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
  const out: VirtualServerClasses = { services: [], nodePorts: [], otherProxy: [], foreign: [] };
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
  const isNodePort = (v: VirtualServer) =>
    v.port !== null && ((v.port >= lo && v.port <= hi) || learned.has(`${v.protocol}:${v.port}`));
  for (const v of vs) {
    if (v.address !== null && serviceIPs.has(v.address)) out.services.push(v);
    else if (theirs.has(v)) out.otherProxy.push(v);
    else if (v.address !== null && local.has(v.address) && isNodePort(v)) out.nodePorts.push(v);
    else out.foreign.push(v);
  }
  return out;
}
