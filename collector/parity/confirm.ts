import type { ApiEndpointSlice, ApiService, ClusterFacts, SliceReads } from "../report/cluster-facts.js";
import type { NodeParity, ParityCheck, ParityDiffer } from "./schema.js";
import { usableEndpoints } from "./endpoints.js";
import { few, matchSet } from "./match.js";
import { nameLost, serviceHolding, servicePortName } from "./name.js";

// Confirming against the API: the flagged entries held against the current Services and their
// EndpointSlices. Pure: gather reads the slices (sources/), this judges them.

interface ConfirmContext {
  cluster: ClusterFacts | null;
  /** Absent: the collector did not read EndpointSlices at all (a source without the API). */
  slices: SliceReads | undefined;
  node: string;
  zone: string | null;
}

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
