import { z } from "zod";
import { canonicalIp } from "../../agent/contract.js";
import { findingPageUrl, repositoryFileUrl } from "../../common/finding-page.js";
import type { ApiService, ClusterFacts } from "./cluster-facts.js";
import type { FleetNode, FleetReport, NodeFinding } from "./schema.js";

// What the switch from ipvs to nftables mode changes for each Service (docs/ipvs-to-nftables.md), for
// the application owners: the API's Services held against the nodes' findings and their evidence.
// A node whose report or needed probe was not read is named as "not known", never counted as untouched.

const DOC = `${repositoryFileUrl("docs/ipvs-to-nftables.md")}#ipvs--nftables`;

export const ChangeLine = z.object({
  /** namespace/name, as the API gave it. */
  service: z.string(),
  /** The row of docs/ipvs-to-nftables.md's ipvs → nftables table. */
  row: z.number().int(),
  change: z.string(),
  why: z.string(),
  doc: z.string(),
  finding: z.string(),
  findingPage: z.string(),
  /** "all nodes" or the nodes the findings name (comma-separated); "not known" when none is known. */
  where: z.string(),
  nodes: z.array(z.string()),
  /** False when no node is known to carry it but some were not read: the line stands for "not known". */
  known: z.boolean(),
  /** "node: why" for each node whose part was not read. */
  notKnown: z.array(z.string()),
  /** Addresses, ports, connections from the evidence, "node: …". */
  detail: z.array(z.string()),
  todo: z.string(),
});
export type ChangeLine = z.infer<typeof ChangeLine>;

export const ServiceChanges = z.object({
  generatedAt: z.string(),
  services: z.number().int(),
  lines: z.array(ChangeLine),
  /** What could not be said at all ("not known: …"): the Services not read, say. */
  notKnown: z.array(z.string()),
});
export type ServiceChanges = z.infer<typeof ServiceChanges>;

// The probes each finding's rule needs (agent/rules/before/*.ts `needs`): one failed, the rule said nothing.
const NEEDS: Record<string, readonly string[]> = {
  "nodeport-addresses-shrink": ["addresses", "configz", "ipvs", "kubeIpvs0", "ipsets"],
  "health-check-nodeports-shrink": ["listeners", "configz", "addresses", "ipsets"],
  "service-ips-answered-by-arp": ["addresses", "sysctls", "kubeIpvs0", "ipvs"],
  "ipvs-connections-cut-at-switch": ["ipvsConnections", "ipvs", "kubeIpvs0", "addresses"],
  "ipvs-scheduler-not-rr": ["configz", "ipvs", "kubeIpvs0", "addresses"],
  "etp-local-in-cluster-callers": ["serviceConntrack"],
  "service-ips-host-ports-close": ["kubeIpvs0"],
};

const nameOf = (s: ApiService) => `${s.namespace}/${s.name}`;
const strings = (v: unknown): string[] | null =>
  Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : null;
const CUT = /^… and \d+ more$/;
// Compared in canonical form: the API keeps an address as written, the kernel prints RFC 5952.
const ipOf = (a: string) => {
  const bare = a.replace(/^\[|\]$/g, "");
  return canonicalIp(bare) ?? bare;
};

/** Per node: the finding, or why the node cannot say (no report, probe not read), or null (not there). */
type Seen = { node: string; finding: NodeFinding } | { node: string; unknown: string };

/** Whether the switch is ahead of a node: it runs ipvs, or why that is not known; null: it does not. */
function onIpvs(n: FleetNode): { unknown: string } | "ipvs" | null {
  if (n.outcome !== "ok") return { unknown: `no usable report (${n.outcome})` };
  if (n.phase === null || n.phase === "unknown") return { unknown: "its mode is not known" };
  return n.phase === "ipvs" ? "ipvs" : null; // the change is behind it, or it never ran ipvs
}

function seenOn(nodes: readonly FleetNode[], id: string, needsEvidence: boolean, source: string): Seen[] {
  const out: Seen[] = [];
  for (const n of nodes) {
    const on = onIpvs(n);
    if (on === null) continue;
    if (on !== "ipvs") {
      out.push({ node: n.node, unknown: on.unknown });
      continue;
    }
    const f = n.findings.find((x) => x.id === id);
    if (f) {
      if (needsEvidence && f.evidence === undefined)
        out.push({ node: n.node, unknown: `${id} fired but --source ${source} carries no evidence` });
      else out.push({ node: n.node, finding: f });
      continue;
    }
    const failed = (NEEDS[id] ?? []).filter((p) => n.failedProbes.includes(p));
    if (failed.length > 0) out.push({ node: n.node, unknown: `${failed.join(", ")} not read` });
  }
  return out;
}

interface Row {
  row: number;
  finding: string;
  change: string;
  source: string;
  todo: string;
}

function line(
  s: ApiService,
  r: Row,
  where: "all" | { nodes: string[]; notKnown: string[]; detail: string[] },
  allDetail: readonly string[] = [],
) {
  const nodes = where === "all" ? [] : where.nodes;
  const notKnown = where === "all" ? [] : where.notKnown;
  return ChangeLine.parse({
    service: nameOf(s),
    row: r.row,
    change: r.change,
    why: `docs/ipvs-to-nftables.md#ipvs--nftables row ${r.row}: ${r.source}`,
    doc: DOC,
    finding: r.finding,
    findingPage: findingPageUrl(r.finding),
    where:
      where === "all"
        ? "all nodes"
        : nodes.length > 0
          ? nodes.join(", ")
          : `not known: ${notKnown.join("; ")}`,
    nodes,
    known: where === "all" || nodes.length > 0,
    notKnown,
    detail: where === "all" ? [...allDetail] : where.detail,
    todo: r.todo,
  });
}

/**
 * Per-node lines from one finding: `match` says, from the finding's evidence, whether it touches this
 * Service (with detail), does not, or cannot tell (a list cut short). Null when no node is concerned.
 */
function fromFinding(
  s: ApiService,
  r: Row,
  seen: readonly Seen[],
  match: (f: NodeFinding) => { hit: boolean; detail?: string[]; unknown?: string },
): ChangeLine | null {
  const nodes: string[] = [];
  const notKnown: string[] = [];
  const detail: string[] = [];
  for (const x of seen) {
    if ("unknown" in x) {
      notKnown.push(`${x.node}: ${x.unknown}`);
      continue;
    }
    const m = match(x.finding);
    if (m.hit) {
      nodes.push(x.node);
      for (const d of m.detail ?? []) detail.push(`${x.node}: ${d}`);
    } else if (m.unknown) notKnown.push(`${x.node}: ${m.unknown}`);
  }
  if (nodes.length === 0 && notKnown.length === 0) return null;
  return line(s, r, { nodes, notKnown, detail });
}

const ROWS = {
  nodePorts: {
    row: 1,
    finding: "nodeport-addresses-shrink",
    change:
      "its NodePorts answer only on the nodes' primary addresses (nftables mode defaults nodePortAddresses to primary)",
    source: "nftables Init default; ipvs syncProxyRules GetAllLocalAddressesExcept",
    todo: 'move clients of its NodePorts to the primary addresses, or have the platform team set nodePortAddresses (e.g. ["0.0.0.0/0"]) before the switch',
  },
  healthCheck: {
    row: 2,
    finding: "health-check-nodeports-shrink",
    change:
      "its health-check NodePort answers only on the nodes' primary addresses: a load balancer checking another address sees the node as down",
    source: "service_health.go newServiceHealthServer",
    todo: "confirm the load balancer health-checks the nodes' primary addresses; otherwise ask for nodePortAddresses to be set before the switch",
  },
  arp: {
    row: 3,
    finding: "service-ips-answered-by-arp",
    change:
      "its external/LoadBalancer IPs stop being answered by ARP: nftables mode binds nothing on kube-ipvs0",
    source: "ipvs proxier (kube-ipvs0, strictARP); kubernetes/kubernetes#59976, #72779",
    todo: "make sure an announcer (MetalLB L2, kube-vip, BGP) announces these IPs before the switch",
  },
  cut: {
    row: 4,
    finding: "ipvs-connections-cut-at-switch",
    change: "its established connections through IPVS are cut at the switch",
    source: "server_linux.go platformCleanup → ipvs CleanupLeftovers",
    todo: "make clients reconnect on failure, or agree a window: the platform team drains these nodes first",
  },
  etpLocal: {
    row: 8,
    finding: "cluster-services-etp-local",
    change:
      "in-cluster callers of its LoadBalancer IP, externalIPs or NodePort go to all endpoints, not the node-local one",
    source:
      'ipvs syncEndpoint(…, ExternalPolicyLocal(), …); nftables "locally-originated pod -> external destination traffic … is subject to neither form of traffic policy"',
    todo: "check in-cluster clients that rely on a node-local endpoint (call the ClusterIP, or use internalTrafficPolicy: Local)",
  },
  serviceIpOther: {
    row: 18,
    finding: "service-ips-host-ports-close",
    change:
      "pings to its Service IPs and connections to other ports of them stop: nftables mode rejects them (ipvs before KUBE-IPVS-FILTER let host services answer)",
    source: "ipvs KUBE-IPVS-FILTER (kubernetes/kubernetes#108460); nftables cluster-ips-check",
    todo: "point whatever pings this Service's IP or reaches a host port through it at the node's address or the Service's port",
  },
  affinity: {
    row: 9,
    finding: "cluster-services-session-affinity",
    change:
      "ClientIP affinity is per endpoint across all of its IPs (with a refreshed timeout), not per IPVS virtual server",
    source: 'KEP-3866 Non-Goals ("the same behavior as iptables … different from ipvs"); ipvs FlagPersistent',
    todo: "check clients that reach it by more than one IP or port and rely on separate stickiness",
  },
  scheduler: {
    row: 10,
    finding: "ipvs-scheduler-not-rr",
    change: "its endpoints are picked at random: the IPVS scheduler (and sh/mh stickiness) goes",
    source: 'website "virtual IPs" (ipvs section)',
    todo: "use sessionAffinity: ClientIP for stickiness, internalTrafficPolicy: Local for locality",
  },
} as const satisfies Record<string, Row>;

/**
 * A row that holds for the Service wherever the switch is ahead: every node still on ipvs; `detail` is
 * what the nodes' findings add ("node: …").
 */
function onIpvsNodes(
  s: ApiService,
  r: Row,
  nodes: readonly FleetNode[],
  detail: readonly string[] = [],
): ChangeLine | null {
  const on: string[] = [];
  const notKnown: string[] = [];
  for (const n of nodes) {
    const x = onIpvs(n);
    if (x === "ipvs") on.push(n.node);
    else if (x !== null) notKnown.push(`${n.node}: ${x.unknown}`);
  }
  if (on.length > 0 && on.length === nodes.length) return line(s, r, "all", detail);
  if (on.length === 0 && notKnown.length === 0) return null;
  return line(s, r, { nodes: on, notKnown, detail: [...detail] });
}

/** "TCP 192.168.1.240:443 (7 connections)" -> [protocol, address, port]; null for anything else. */
function destinationOf(e: string): [string, string, number] | null {
  const m = /^(\S+) (\[[^\]]+\]|[^\s:]+):(\d+) /.exec(e);
  return m === null ? null : [m[1]!, ipOf(m[2]!), Number(m[3])];
}

/** Evidence entries that start with an address (maybe "[v6]"), then a space or the end. */
const firstWord = (e: string) => ipOf(e.split(" ")[0] ?? "");

/**
 * Headless and ExternalName Services: kube-proxy proxies neither in any mode (kubernetes
 * pkg/proxy/util/utils.go ShouldSkipService), so the switch changes nothing for them.
 */
const notProxied = (s: ApiService) =>
  s.type === "ExternalName" || !s.clusterIPs.some((ip) => ip !== "" && ip !== "None");

function perService(s: ApiService, nodes: readonly FleetNode[], source: string): ChangeLine[] {
  if (notProxied(s)) return [];
  const out: (ChangeLine | null)[] = [];
  const seen = (id: string, ev = true) => seenOn(nodes, id, ev, source);
  const etpLocal = s.externalTrafficPolicy === "Local";
  const nodePorts = s.ports.filter((p) => p.nodePort !== null);
  const outerIPs = [...(s.externalIPs ?? []), ...(s.loadBalancerIPs ?? [])].map(ipOf);

  if (nodePorts.length > 0 && (s.type === "NodePort" || s.type === "LoadBalancer"))
    out.push(
      // Every NodePort on the node shrinks: the finding alone says so, its evidence only adds the addresses.
      fromFinding(s, ROWS.nodePorts, seen(ROWS.nodePorts.finding, false), (f) => {
        const mine = new Set(nodePorts.map((p) => `${p.protocol} :${p.nodePort}`));
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
      }),
    );
  if (etpLocal) {
    // The in-cluster callers a node saw (etp-local-in-cluster-callers) to this Service's LB IPs, externalIPs
    // or NodePorts: who changes first. The change itself holds on every ipvs node, seen or not.
    const callers: string[] = [];
    for (const x of seen("etp-local-in-cluster-callers")) {
      if (!("finding" in x)) continue;
      for (const e of strings(x.finding.evidence?.connections) ?? []) {
        const d = destinationOf(e);
        if (d === null) continue;
        const [proto, addr, port] = d;
        const mine = s.ports.some(
          (p) =>
            p.protocol === proto && ((outerIPs.includes(addr) && p.port === port) || p.nodePort === port),
        );
        if (mine) callers.push(`${x.node}: in-cluster callers seen: ${e}`);
      }
    }
    out.push(onIpvsNodes(s, ROWS.etpLocal, nodes, callers));
    const hc = s.healthCheckNodePort;
    if (hc === undefined)
      out.push(
        line(s, ROWS.healthCheck, {
          nodes: [],
          notKnown: ["the Service's healthCheckNodePort was not read (cluster facts of an older collector)"],
          detail: [],
        }),
      );
    else if (hc !== null)
      out.push(
        fromFinding(s, ROWS.healthCheck, seen(ROWS.healthCheck.finding), (f) => {
          const ports = f.evidence?.healthCheckNodePorts;
          if (Array.isArray(ports))
            return { hit: (ports as unknown[]).includes(hc), detail: [`health-check NodePort ${hc}`] };
          return { hit: false, unknown: `its health-check NodePorts were ${String(ports ?? "not named")}` };
        }),
      );
  }
  if (outerIPs.length > 0)
    out.push(
      fromFinding(s, ROWS.arp, seen(ROWS.arp.finding), (f) => {
        const listed = strings(f.evidence?.serviceIpsOnLink) ?? [];
        const hits = listed.filter((e) => outerIPs.includes(firstWord(e)));
        if (hits.length > 0) return { hit: true, detail: hits };
        const cut = listed.some((e) => CUT.test(e));
        return cut
          ? { hit: false, unknown: "its list of on-link Service IPs was cut short" }
          : { hit: false };
      }),
    );
  out.push(
    fromFinding(s, ROWS.cut, seen(ROWS.cut.finding), (f) => {
      const top = strings(f.evidence?.top) ?? [];
      const addrs = new Set([...s.clusterIPs.map(ipOf), ...outerIPs]);
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
    }),
  );
  out.push(
    fromFinding(s, ROWS.serviceIpOther, seen(ROWS.serviceIpOther.finding), (f) => {
      const flows = f.evidence?.flowsToServiceIps;
      const listed = strings(flows);
      if (listed === null)
        return { hit: false, unknown: `its flows to Service IPs were ${String(flows ?? "not named")}` };
      const addrs = new Set([...s.clusterIPs.map(ipOf), ...outerIPs]);
      const hits = listed.filter((e) => addrs.has(firstWord(e)));
      if (hits.length > 0) return { hit: true, detail: hits };
      return listed.some((e) => CUT.test(e))
        ? { hit: false, unknown: "its list of flows to Service IPs was cut short" }
        : { hit: false };
    }),
  );
  if (s.sessionAffinity === "ClientIP") out.push(onIpvsNodes(s, ROWS.affinity, nodes));
  out.push(
    fromFinding(s, ROWS.scheduler, seen(ROWS.scheduler.finding, false), (f) => {
      const c = f.evidence?.configured;
      const vs = strings(f.evidence?.schedulersOfKubeProxyVirtualServers) ?? [];
      const named = [...new Set([...(typeof c === "string" ? [c] : []), ...vs])];
      return { hit: true, detail: named.length ? [`scheduler ${named.join(", ")}`] : [] };
    }),
  );
  return out.filter((l): l is ChangeLine => l !== null);
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
