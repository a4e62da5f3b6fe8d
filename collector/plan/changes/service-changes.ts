import type { ApiService, ClusterFacts } from "../../report/cluster-facts.js";
import type { FleetNode, FleetReport } from "../../report/schema.js";
import { ipOf } from "./evidence.js";
import { affinityLine, arpLine, cutLine, schedulerLine, serviceIpOtherLine } from "./rows-addresses.js";
import { etpLocalLines, nodePortsLine, type ServiceContext } from "./rows-nodes.js";
import type { ChangeLine, ServiceChanges } from "./schema.js";
import { seenOn } from "./seen.js";

/**
 * Headless and ExternalName Services: kube-proxy proxies neither in any mode (kubernetes
 * pkg/proxy/util/utils.go ShouldSkipService), so the switch changes nothing for them.
 */
const notProxied = (s: ApiService) =>
  s.type === "ExternalName" || !s.clusterIPs.some((ip) => ip !== "" && ip !== "None");

/** One Service's lines, in the order of docs/ipvs-to-nftables.md's rows as the page lists them. */
function perService(s: ApiService, nodes: readonly FleetNode[], source: string): ChangeLine[] {
  if (notProxied(s)) return [];
  const c: ServiceContext = {
    s,
    nodes,
    seen: (id, ev = true) => seenOn(nodes, id, ev, source),
    outerIPs: [...(s.externalIPs ?? []), ...(s.loadBalancerIPs ?? [])].map(ipOf),
  };
  return [
    nodePortsLine(c),
    ...etpLocalLines(c),
    arpLine(c),
    cutLine(c),
    serviceIpOtherLine(c),
    affinityLine(c),
    schedulerLine(c),
  ].filter((l): l is ChangeLine => l !== null);
}

/** Every Service the API listed, each with the rows of docs/ipvs-to-nftables.md that apply to it. */
export function serviceChanges(cluster: ClusterFacts | null, report: FleetReport): ServiceChanges {
  const notKnown: string[] = [];
  if (cluster === null)
    notKnown.push(
      "not known: no API server was asked (--source static without --kubeconfig): no Service was read",
    );
  else
    for (const g of cluster.gaps)
      if (g.what.startsWith("services"))
        notKnown.push(`not known: the Services could not be read (${g.what}: ${g.reason})`);
  const services = cluster?.services ?? [];
  return {
    generatedAt: report.generatedAt,
    services: services.length,
    lines: services.flatMap((s) => perService(s, report.nodes, report.source)),
    notKnown,
  };
}
