import type {
  ApiEndpointSlice,
  ApiService,
  ClusterFacts,
  SliceEndpoint,
  SliceReads,
} from "./report/cluster-facts.js";
import type { FleetNode, FleetReport, NodeParity, ParityCheck, ParityDiffer } from "./report/schema.js";

// Parity in the fleet: each node's parity after its switch, its lost addresses named from the API, and
// the fleet-wide tally the plan's canary step reads. Pure.

/** "10.96.0.20:80/TCP" or "nodeport:30080/TCP" -> "ns/name (10.96.0.20:80/TCP)" when a Service holds it. */
export function nameLost(entry: string, cluster: ClusterFacts | null): string {
  const held = cluster === null ? null : serviceHolding(entry, cluster.services);
  return held ? `${held.svc.namespace}/${held.svc.name} (${entry})` : entry;
}

export function nameNodeParity(
  p: NodeParity | null | undefined,
  cluster: ClusterFacts | null,
): NodeParity | null {
  if (p == null) return null;
  return {
    ...p,
    lost: p.lost.map((e) => nameLost(e, cluster)),
    ...(p.arpOnly !== undefined ? { arpOnly: p.arpOnly.map((e) => nameLost(e, cluster)) } : {}),
  };
}

export function fleetParity(nodes: readonly FleetNode[]): NonNullable<FleetReport["summary"]["parity"]> {
  const byState: Record<string, number> = {};
  let missingAfter = 0;
  let endpointsDiffer = 0;
  let same = 0;
  const nodesWithLost: string[] = [];
  for (const n of nodes) {
    if (n.outcome !== "ok") continue;
    const state = n.parity?.state ?? "unknown";
    byState[state] = (byState[state] ?? 0) + 1;
    const c = n.parity?.counts;
    if (!c) continue;
    missingAfter += c.missingAfter;
    endpointsDiffer += c.endpointsDiffer;
    same += c.same;
    if (c.missingAfter > 0) nodesWithLost.push(n.node);
  }
  const byVerdict: Record<string, number> = {};
  const nodesWithConfirmedLoss: string[] = [];
  for (const n of nodes) {
    if (n.outcome !== "ok") continue;
    const checks = n.parity?.checks ?? [];
    for (const c of checks) byVerdict[c.verdict] = (byVerdict[c.verdict] ?? 0) + 1;
    if (checks.some(isLoss)) nodesWithConfirmedLoss.push(n.node);
  }
  return { byState, nodesWithLost, missingAfter, endpointsDiffer, same, byVerdict, nodesWithConfirmedLoss };
}

const isLoss = (c: ParityCheck) => c.verdict === "confirmed-loss" || c.verdict === "real-loss";

/**
 * A node whose lost Services the API explains (every one deleted, or without endpoints) no longer
 * holds the next pool back; one the API could not check still does, and a real loss of endpoints does.
 */
function holdsBack(n: FleetNode): boolean {
  const p = n.parity;
  if (!p) return false;
  const checks = p.checks;
  const missing = p.counts?.missingAfter ?? 0;
  if (checks === undefined) return missing > 0;
  // Lost Services the API never judged (the agent's list is cut; Prometheus carries counts only) are unproven.
  if (missing > checks.filter((c) => c.agent === "missing-after").length) return true;
  return checks.some((c) => isLoss(c) || (c.agent === "missing-after" && c.verdict === "not-confirmed"));
}

/** What the canary step says about parity on the nodes that have switched. */
export function canaryParityNote(nodes: readonly FleetNode[]): { blocked: string[]; unproven: string[] } {
  const switched = nodes.filter((n) => n.outcome === "ok" && n.phase === "nftables");
  return {
    blocked: switched.filter(holdsBack).map((n) => n.node),
    unproven: switched.filter((n) => n.parity?.state !== "compared").map((n) => n.node),
  };
}

// --- Confirming against the API: the flagged entries held against the current Services and
// their EndpointSlices. Pure: gather reads the slices (sources/kubernetes/endpointslices.ts), this judges them.

type Held = { svc: ApiService; port: ApiService["ports"][number] };

const ENTRY = /^(?:nodeport:(\d+)|\[?([^\]]+?)\]?:(\d+))\/(TCP|UDP|SCTP)$/;

/** The Service (and port) that holds a lost address now: ClusterIP, externalIP or LoadBalancer IP, or NodePort. */
export function serviceHolding(entry: string, services: readonly ApiService[]): Held | null {
  const m = ENTRY.exec(entry);
  if (!m) return null;
  const [, nodePort, ip, port, proto] = m;
  for (const svc of services) {
    const ips = [...svc.clusterIPs, ...(svc.externalIPs ?? []), ...(svc.loadBalancerIPs ?? [])];
    const p = svc.ports.find(
      (p) =>
        p.protocol.toUpperCase() === proto &&
        (nodePort !== undefined
          ? p.nodePort === Number(nodePort)
          : p.port === Number(port) && ips.includes(ip!)),
    );
    if (p) return { svc, port: p };
  }
  return null;
}

/** "ns/svc:port" (kube-proxy's ServicePortName) -> its parts; the port name is "" for an unnamed port. */
function servicePortName(s: string): { namespace: string; name: string; port: string } | null {
  const m = /^([^/]+)\/([^:]+)(?::(.+))?$/.exec(s);
  return m ? { namespace: m[1]!, name: m[2]!, port: m[3] ?? "" } : null;
}

const epText = (address: string, port: number) =>
  address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;

interface Usable {
  /** What kube-proxy programs on this node: the union of its cluster and local endpoints. */
  all: Set<string>;
  /** The same, narrowed by topology hints for this node (null when no hint applies). */
  topology: Set<string> | null;
  /** Ready endpoints of the port anywhere in the cluster. */
  readyAnywhere: string[];
}

/**
 * The endpoints kube-proxy programs for one Service port on one node, as pkg/proxy/topology.go
 * CategorizeEndpoints chooses them: ready ones (narrowed by zone or node hints when every endpoint
 * carries them and one is for this node), else serving-and-terminating ones; with Local traffic
 * policy only the node's own, and the cluster set not at all when no policy uses it.
 */
export function usableEndpoints(
  slices: readonly ApiEndpointSlice[],
  held: Held,
  node: string,
  zone: string | null,
): Usable {
  const eps: { text: string; e: SliceEndpoint }[] = [];
  const want = held.port.name ?? "";
  for (const s of slices) {
    if (s.addressType !== "IPv4" && s.addressType !== "IPv6") continue; // kube-proxy reads no other
    const p = s.ports.find(
      (p) => p.name === want && p.protocol.toUpperCase() === held.port.protocol.toUpperCase(),
    );
    if (!p || p.port === null) continue;
    for (const e of s.endpoints) eps.push({ text: epText(e.address, p.port), e });
  }
  const svc = held.svc;
  const external =
    held.port.nodePort !== null ||
    (svc.externalIPs ?? []).length > 0 ||
    (svc.loadBalancerIPs ?? []).length > 0;
  const iLocal = svc.internalTrafficPolicy === "Local";
  const eLocal = svc.externalTrafficPolicy === "Local";
  const usesCluster = !iLocal || (external && !eLocal);
  const usesLocal = iLocal || (eLocal && external);
  const pick = (filter: (e: SliceEndpoint) => boolean) => {
    const ready = eps.filter((x) => x.e.ready && filter(x.e));
    return (ready.length > 0 ? ready : eps.filter((x) => x.e.serving && x.e.terminating && filter(x.e))).map(
      (x) => x.text,
    );
  };
  const local = usesLocal ? pick((e) => e.nodeName === node) : [];
  const cluster = usesCluster ? pick(() => true) : [];
  const all = new Set([...cluster, ...local]);
  let topology: Set<string> | null = null;
  if (usesCluster) {
    const ready = eps.filter((x) => x.e.ready);
    const byNode = ready.length > 0 && ready.every((x) => x.e.forNodes !== null);
    const byZone = ready.length > 0 && ready.every((x) => x.e.forZones !== null);
    const hinted = byNode
      ? ready.filter((x) => x.e.forNodes!.includes(node))
      : byZone && zone !== null
        ? ready.filter((x) => x.e.forZones!.includes(zone))
        : [];
    if (hinted.length > 0) topology = new Set([...hinted.map((x) => x.text), ...local]);
  }
  return { all, topology, readyAnywhere: eps.filter((x) => x.e.ready).map((x) => x.text) };
}

export interface ConfirmContext {
  cluster: ClusterFacts | null;
  /** Absent: the collector did not read EndpointSlices at all (a source without the API). */
  slices: SliceReads | undefined;
  node: string;
  zone: string | null;
}

const few = (xs: readonly string[]) =>
  `${xs.slice(0, 5).join(" ")}${xs.length > 5 ? ` (+${xs.length - 5})` : ""}`;
const SERVICES_GAP = "services (all namespaces)";

/** Why the API cannot answer for any entry, or null when it can. */
function unanswerable(ctx: ConfirmContext): string | null {
  if (ctx.cluster === null) return "no API server was asked (static source without --kubeconfig)";
  const gap = ctx.cluster.gaps.find((g) => g.what === SERVICES_GAP);
  if (gap) return `Services not read: ${gap.reason}`;
  return null;
}

function slicesOf(
  ctx: ConfirmContext,
  svc: ApiService,
): { ok: true; slices: ApiEndpointSlice[] } | { ok: false; reason: string } {
  const r = ctx.slices?.get(`${svc.namespace}/${svc.name}`);
  if (r === undefined)
    return { ok: false, reason: "EndpointSlices not read (this source does not read them)" };
  return r.ok ? r : { ok: false, reason: `EndpointSlices not read: ${r.reason}` };
}

const check = (
  entry: string,
  agent: ParityCheck["agent"],
  verdict: ParityCheck["verdict"],
  reason: string,
  severity: ParityCheck["severity"] = verdict === "confirmed-loss"
    ? "error"
    : verdict === "real-loss"
      ? "warning"
      : "info",
): ParityCheck => ({ entry, agent, verdict, severity, reason });

function confirmLost(entry: string, ctx: ConfirmContext): ParityCheck {
  const named = nameLost(entry, ctx.cluster);
  const no = unanswerable(ctx);
  if (no !== null) return check(named, "missing-after", "not-confirmed", no, "warning");
  const held = serviceHolding(entry, ctx.cluster!.services);
  if (held === null)
    return check(
      named,
      "missing-after",
      "explained",
      `no Service holds ${entry} now: deleted (or its address or port changed) since the snapshot`,
    );
  const who = `${held.svc.namespace}/${held.svc.name}`;
  const named2 = `${who} (${entry})`;
  const r = slicesOf(ctx, held.svc);
  if (!r.ok) return check(named2, "missing-after", "not-confirmed", r.reason, "warning");
  const u = usableEndpoints(r.slices, held, ctx.node, ctx.zone);
  if (u.readyAnywhere.length === 0)
    return check(
      named2,
      "missing-after",
      "explained",
      `${who} has no ready endpoint now: nothing to serve (kube-proxy lists such a Service in no-endpoint-services; check it by hand)`,
    );
  return check(
    named2,
    "missing-after",
    "confirmed-loss",
    `${who} still exists with ${u.readyAnywhere.length} ready endpoint(s) (${few(u.readyAnywhere)}), and kube-proxy does not serve it in nftables mode`,
  );
}

type Match = { ok: true } | { ok: false; why: string } | { ok: null; why: string };

/** Whether the agent's nftables endpoints are this expected set: yes, no (and why), or cannot tell. */
function matchSet(d: ParityDiffer, expected: ReadonlySet<string>): Match {
  const after = d.after;
  if (after !== null && after.length === d.endpointsAfter) {
    const have = new Set(after);
    const missing = [...expected].filter((e) => !have.has(e)).sort();
    const extra = after.filter((e) => !expected.has(e));
    if (missing.length === 0 && extra.length === 0) return { ok: true };
    return {
      ok: false,
      why: [
        missing.length > 0 ? `ready in the EndpointSlices but not in nftables: ${few(missing)}` : "",
        extra.length > 0 ? `in nftables but not ready in the EndpointSlices: ${few(extra)}` : "",
      ]
        .filter(Boolean)
        .join("; "),
    };
  }
  // Only part of the list came (cut, or an older agent): a contradiction still proves a difference.
  const wrong = [...(after ?? []), ...d.added].filter((e) => !expected.has(e));
  const unserved = d.gone.filter((e) => expected.has(e));
  if (d.endpointsAfter !== expected.size || wrong.length > 0 || unserved.length > 0)
    return {
      ok: false,
      why: [
        d.endpointsAfter !== expected.size
          ? `${d.endpointsAfter} endpoint(s) in nftables, ${expected.size} ready in the EndpointSlices`
          : "",
        wrong.length > 0 ? `in nftables but not ready: ${few(wrong)}` : "",
        unserved.length > 0 ? `ready but no longer in nftables: ${few(unserved)}` : "",
      ]
        .filter(Boolean)
        .join("; "),
    };
  return {
    ok: null,
    why:
      after === null
        ? "the agent did not list its nftables endpoints (an older agent): the counts agree, the set is unproven"
        : `the agent listed ${after.length} of ${d.endpointsAfter} nftables endpoints: those agree, the rest is unproven`,
  };
}

function confirmDiffer(d: ParityDiffer, ctx: ConfirmContext): ParityCheck {
  const entry = `${d.service}/${d.protocol}`;
  const no = unanswerable(ctx);
  if (no !== null) return check(entry, "endpoints-differ", "not-confirmed", no, "warning");
  const spn = servicePortName(d.service);
  const svc = spn && ctx.cluster!.services.find((s) => s.namespace === spn.namespace && s.name === spn.name);
  if (!spn || !svc)
    return check(
      entry,
      "endpoints-differ",
      "explained",
      `no Service ${spn ? `${spn.namespace}/${spn.name}` : d.service} now: deleted since the snapshot`,
    );
  const port = svc.ports.find(
    (p) => (p.name ?? "") === spn.port && p.protocol.toUpperCase() === d.protocol.toUpperCase(),
  );
  if (!port)
    return check(
      entry,
      "endpoints-differ",
      "explained",
      `${svc.namespace}/${svc.name} has no port ${spn.port || "(unnamed)"}/${d.protocol} now: removed since the snapshot`,
    );
  const r = slicesOf(ctx, svc);
  if (!r.ok) return check(entry, "endpoints-differ", "not-confirmed", r.reason, "warning");
  const u = usableEndpoints(r.slices, { svc, port }, ctx.node, ctx.zone);
  const tries = [u.all, ...(u.topology ? [u.topology] : [])].map((s) => matchSet(d, s));
  if (tries.some((m) => m.ok === true))
    return check(
      entry,
      "endpoints-differ",
      "churn",
      `nftables serves exactly the ${u.all.size} endpoint(s) the current EndpointSlices make ready: the endpoints changed since the snapshot, nothing was lost`,
    );
  const unsure = tries.find((m) => m.ok === null);
  if (unsure) return check(entry, "endpoints-differ", "not-confirmed", unsure.why, "warning");
  const first = tries[0] as { why: string };
  const servedNone =
    d.after !== null &&
    d.after.length === d.endpointsAfter &&
    u.all.size > 0 &&
    ![...u.all].some((e) => d.after!.includes(e));
  return check(
    entry,
    "endpoints-differ",
    "real-loss",
    `nftables does not serve what the current EndpointSlices make ready: ${first.why}`,
    servedNone ? "error" : "warning",
  );
}

/** Each entry the agent flagged, judged against the API. */
export function confirmNodeParity(p: NodeParity, ctx: ConfirmContext): ParityCheck[] {
  return [...p.lost.map((e) => confirmLost(e, ctx)), ...(p.differ ?? []).map((d) => confirmDiffer(d, ctx))];
}

/** The Services whose EndpointSlices the collector must read: those holding a lost entry, or differing. */
export function flaggedServices(
  observations: readonly { outcome: string; parity?: NodeParity | null }[],
  cluster: ClusterFacts | null,
): { namespace: string; name: string }[] {
  if (cluster === null) return [];
  const out = new Map<string, { namespace: string; name: string }>();
  const add = (namespace: string, name: string) => out.set(`${namespace}/${name}`, { namespace, name });
  for (const o of observations) {
    if (o.outcome !== "ok" || !o.parity) continue;
    for (const e of o.parity.lost) {
      const h = serviceHolding(e, cluster.services);
      if (h) add(h.svc.namespace, h.svc.name);
    }
    for (const d of o.parity.differ ?? []) {
      const s = servicePortName(d.service);
      if (s && cluster.services.some((x) => x.namespace === s.namespace && x.name === s.name))
        add(s.namespace, s.name);
    }
  }
  return [...out.values()];
}
