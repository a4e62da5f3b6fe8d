import type { ApiService } from "../../report/cluster-facts.js";
import type { FleetNode } from "../../report/schema.js";
import { destinationOf, strings } from "./evidence.js";
import { fromFinding, line, onIpvsNodes } from "./line.js";
import { ROWS } from "./rows.js";
import type { ChangeLine } from "./schema.js";
import type { Seen } from "./seen.js";

// The rows about how a Service is reached through the nodes: its NodePorts, its health-check NodePort,
// and what externalTrafficPolicy: Local does for in-cluster callers.

/** What every row of one Service reads: the Service, the fleet's nodes, and each finding as seen on them. */
export interface ServiceContext {
  s: ApiService;
  nodes: readonly FleetNode[];
  /** Each node's finding of this id (`evidence`: a finding without evidence is not known). */
  seen: (id: string, evidence?: boolean) => Seen[];
  /** The Service's externalIPs and LoadBalancer IPs, canonical. */
  outerIPs: string[];
}

/** Row 1: every NodePort on the node shrinks; the finding alone says so, its evidence adds the addresses. */
export function nodePortsLine({ s, seen }: ServiceContext): ChangeLine | null {
  const nodePorts = s.ports.filter((p) => p.nodePort !== null);
  if (nodePorts.length === 0 || (s.type !== "NodePort" && s.type !== "LoadBalancer")) return null;
  const mine = new Set(nodePorts.map((p) => `${p.protocol} :${p.nodePort}`));
  return fromFinding(s, ROWS.nodePorts, seen(ROWS.nodePorts.finding, false), (f) => {
    const busy = (strings(f.evidence?.withConnections) ?? []).filter((e) => {
      const m = /^(\S+) \S*:(\d+) /.exec(e);
      return m !== null && mine.has(`${m[1]} :${m[2]}`);
    });
    const addrs = strings(f.evidence?.secondaryAddresses) ?? [];
    return {
      hit: true,
      detail: [
        ...(addrs.length ? [`not served on ${addrs.join(", ")}`] : []),
        ...busy.map((b) => `in use: ${b}`),
      ],
    };
  });
}

/**
 * Row 8: the in-cluster callers a node saw (etp-local-in-cluster-callers) to this Service's LB IPs,
 * externalIPs or NodePorts: who changes first. The change itself holds on every ipvs node, seen or not.
 */
function etpLocalLine({ s, nodes, seen, outerIPs }: ServiceContext): ChangeLine | null {
  const callers: string[] = [];
  for (const x of seen("etp-local-in-cluster-callers")) {
    if (!("finding" in x)) continue;
    for (const e of strings(x.finding.evidence?.connections) ?? []) {
      const d = destinationOf(e);
      if (d === null) continue;
      const [proto, addr, port] = d;
      const mine = s.ports.some(
        (p) => p.protocol === proto && ((outerIPs.includes(addr) && p.port === port) || p.nodePort === port),
      );
      if (mine) callers.push(`${x.node}: in-cluster callers seen: ${e}`);
    }
  }
  return onIpvsNodes(s, ROWS.etpLocal, nodes, callers);
}

/** Row 2: the health-check NodePort answers only on primary addresses; not read is "not known". */
function healthCheckLine({ s, seen }: ServiceContext): ChangeLine | null {
  const hc = s.healthCheckNodePort;
  if (hc === undefined)
    return line(s, ROWS.healthCheck, {
      nodes: [],
      notKnown: ["the Service's healthCheckNodePort was not read (cluster facts of an older collector)"],
      detail: [],
    });
  if (hc === null) return null;
  return fromFinding(s, ROWS.healthCheck, seen(ROWS.healthCheck.finding), (f) => {
    const ports = f.evidence?.healthCheckNodePorts;
    if (Array.isArray(ports))
      return { hit: (ports as unknown[]).includes(hc), detail: [`health-check NodePort ${hc}`] };
    return { hit: false, unknown: `its health-check NodePorts were ${String(ports ?? "not named")}` };
  });
}

/** Rows 8 and 2, for a Service with externalTrafficPolicy: Local. */
export function etpLocalLines(c: ServiceContext): (ChangeLine | null)[] {
  if (c.s.externalTrafficPolicy !== "Local") return [];
  return [etpLocalLine(c), healthCheckLine(c)];
}
