import { CUT, firstWord, ipOf, strings } from "./evidence.js";
import { fromFinding, onIpvsNodes } from "./line.js";
import { ROWS } from "./rows.js";
import type { ServiceContext } from "./rows-nodes.js";
import type { ChangeLine } from "./schema.js";

// The rows about a Service's own addresses and what reaches them: ARP for its outer IPs, connections cut
// at the switch, other ports of its IPs, ClientIP affinity and the IPVS scheduler.

/** Row 3: the outer IPs kube-ipvs0 answered ARP for; a cut list is not known. */
export function arpLine({ s, seen, outerIPs }: ServiceContext): ChangeLine | null {
  if (outerIPs.length === 0) return null;
  return fromFinding(s, ROWS.arp, seen(ROWS.arp.finding), (f) => {
    const listed = strings(f.evidence?.serviceIpsOnLink) ?? [];
    const hits = listed.filter((e) => outerIPs.includes(firstWord(e)));
    if (hits.length > 0) return { hit: true, detail: hits };
    const cut = listed.some((e) => CUT.test(e));
    return cut ? { hit: false, unknown: "its list of on-link Service IPs was cut short" } : { hit: false };
  });
}

/** Row 4: its virtual servers among the busiest with established connections; the rest is not known. */
export function cutLine({ s, seen, outerIPs }: ServiceContext): ChangeLine | null {
  const addrs = new Set([...s.clusterIPs.map(ipOf), ...outerIPs]);
  return fromFinding(s, ROWS.cut, seen(ROWS.cut.finding), (f) => {
    const top = strings(f.evidence?.top) ?? [];
    const hits = top.filter((e) => {
      const m = /^(\S+) (\[[^\]]+\]|[^\s:]+):(\d+) \((Service IP|NodePort)\)/.exec(e);
      if (m === null) return false;
      const [, proto, addr, port, kind] = m;
      return kind === "NodePort"
        ? s.ports.some((p) => p.protocol === proto && p.nodePort === Number(port))
        : addrs.has(ipOf(addr!)) && s.ports.some((p) => p.protocol === proto && p.port === Number(port));
    });
    if (hits.length > 0) return { hit: true, detail: hits };
    const all = f.evidence?.virtualServersWithConnections;
    if (typeof all === "number" && all > top.length)
      return {
        hit: false,
        unknown: `only the ${top.length} busiest of ${all} virtual servers with connections are named`,
      };
    return { hit: false };
  });
}

/** Row 18: flows to its Service IPs that nftables mode rejects. */
export function serviceIpOtherLine({ s, seen, outerIPs }: ServiceContext): ChangeLine | null {
  const addrs = new Set([...s.clusterIPs.map(ipOf), ...outerIPs]);
  return fromFinding(s, ROWS.serviceIpOther, seen(ROWS.serviceIpOther.finding), (f) => {
    const flows = f.evidence?.flowsToServiceIps;
    const listed = strings(flows);
    if (listed === null)
      return { hit: false, unknown: `its flows to Service IPs were ${String(flows ?? "not named")}` };
    const hits = listed.filter((e) => addrs.has(firstWord(e)));
    if (hits.length > 0) return { hit: true, detail: hits };
    return listed.some((e) => CUT.test(e))
      ? { hit: false, unknown: "its list of flows to Service IPs was cut short" }
      : { hit: false };
  });
}

/** Row 9: ClientIP affinity changes on every node still on ipvs. */
export const affinityLine = ({ s, nodes }: ServiceContext): ChangeLine | null =>
  s.sessionAffinity === "ClientIP" ? onIpvsNodes(s, ROWS.affinity, nodes) : null;

/** Row 10: the scheduler goes; the finding alone says so, its evidence names the schedulers. */
export function schedulerLine({ s, seen }: ServiceContext): ChangeLine | null {
  return fromFinding(s, ROWS.scheduler, seen(ROWS.scheduler.finding, false), (f) => {
    const c = f.evidence?.configured;
    const vs = strings(f.evidence?.schedulersOfKubeProxyVirtualServers) ?? [];
    const named = [...new Set([...(typeof c === "string" ? [c] : []), ...vs])];
    return { hit: true, detail: named.length ? [`scheduler ${named.join(", ")}`] : [] };
  });
}
