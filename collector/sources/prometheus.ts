import { z } from "zod";
import { METRIC, Phase, Severity, Verdict } from "../../agent/contract.js";
import { httpGet } from "../../common/http.js";
import { failedObservation, unknownFindings } from "../observe.js";
import { mapPool } from "../pool.js";
import type { NodeObservation } from "../report/schema.js";
import type { Result } from "../../common/result.js";

export interface PrometheusOptions {
  url: string;
  /**
   * The target label carrying the node name. The shipped scrape config sets `node` by relabeling
   * from __meta_kubernetes_pod_node_name; anything else can be named here.
   */
  nodeLabel: string;
  /**
   * The deadline every query of one gather shares, and Prometheus is told it too so it stops
   * evaluating when we stop waiting. One query answers for the whole fleet and costs with its size
   * (50,000 nodes: seconds of Prometheus CPU), so the per-call deadline of one agent's answer does not fit.
   */
  timeoutMs: number;
  maxBytes: number;
  /** A last scan older than this is reported as stale in the node's reason. */
  staleAfterS: number;
  now: () => number;
}

const Sample = z.object({
  metric: z.record(z.string(), z.string()),
  value: z.tuple([z.number(), z.string()]),
});
const QueryResponse = z.object({
  status: z.literal("success"),
  data: z.object({ resultType: z.literal("vector"), result: z.array(Sample) }),
});
type Sample = z.infer<typeof Sample>;

/** Queries in flight at once: a Prometheus evaluates about one per core; more only hold more bodies. */
export const QUERY_CONCURRENCY = 4;

/** Pure: the query's URL, carrying the time left as Prometheus's own evaluation timeout. */
export function queryUrl(base: string, path: string, params: Record<string, string>, leftMs: number): string {
  const q = new URLSearchParams({ ...params, timeout: (Math.max(1, leftMs) / 1000).toFixed(3) });
  return `${base.replace(/\/+$/, "")}${path}?${q}`;
}

/** A deadline from now: the milliseconds left, never below zero. */
function deadline(ms: number): () => number {
  const end = performance.now() + ms;
  return () => Math.max(0, end - performance.now());
}

export async function instantQuery(
  opts: PrometheusOptions,
  promql: string,
  leftMs: () => number = deadline(opts.timeoutMs),
): Promise<Result<Sample[]>> {
  const left = leftMs();
  const url = queryUrl(opts.url, "/api/v1/query", { query: promql }, left);
  if (left <= 0)
    return { ok: false, error: `${promql}: not sent, the gather's ${opts.timeoutMs} ms deadline had passed` };
  const res = await httpGet(url, { timeoutMs: left, maxBytes: opts.maxBytes });
  if (!res.ok)
    return {
      ok: false,
      error:
        res.error.kind === "timeout"
          ? `${promql} did not answer within the gather's ${opts.timeoutMs} ms deadline (${res.error.message})`
          : res.error.message,
    };
  if (res.status !== 200)
    return { ok: false, error: `${url} answered HTTP ${res.status}: ${res.body.slice(0, 200)}` };
  const parsed = parseQueryAnswer(res.body, promql);
  return parsed.ok ? parsed : { ok: false, error: `${url}: ${parsed.error}` };
}

/** Pure: an instant query's answer body, judged: the vector's samples, or why there are none. */
/** Pure: an answer body as JSON, or Prometheus's own error named in a bounded excerpt (it answers 200 with status "error" too). */
function answerDoc(body: string): Result<unknown> {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return { ok: false, error: "answered something that is not JSON" };
  }
  const e = doc as { status?: unknown; errorType?: unknown; error?: unknown } | null;
  if (typeof e === "object" && e !== null && e.status === "error")
    return {
      ok: false,
      error: `Prometheus error ${JSON.stringify(String(e.errorType ?? "")).slice(0, 60)}: ${JSON.stringify(String(e.error ?? "")).slice(0, 300)}`,
    };
  return { ok: true, value: doc };
}

/**
 * QueryResponse's shape checked by hand, sample by sample: zod costs ~1 µs a sample, and a 50,000-node
 * fleet's answers hold ~750,000. Only an answer this refuses goes to zod, for zod's own message.
 */
function isVectorAnswer(d: unknown): d is z.infer<typeof QueryResponse> {
  const o = d as { status?: unknown; data?: { resultType?: unknown; result?: unknown } | null } | null;
  if (typeof o !== "object" || o === null || o.status !== "success") return false;
  if (typeof o.data !== "object" || o.data === null || o.data.resultType !== "vector") return false;
  if (!Array.isArray(o.data.result)) return false;
  for (const s of o.data.result as unknown[]) {
    const x = s as { metric?: unknown; value?: unknown } | null;
    if (typeof x !== "object" || x === null || Array.isArray(x)) return false;
    const m = x.metric as Record<string, unknown> | null;
    if (typeof m !== "object" || m === null || Array.isArray(m)) return false;
    for (const k of Object.keys(m)) if (typeof m[k] !== "string") return false;
    const v = x.value;
    if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== "number" || typeof v[1] !== "string")
      return false;
  }
  return true;
}

export function parseQueryAnswer(body: string, promql: string): Result<Sample[]> {
  const d = answerDoc(body);
  if (!d.ok) return d;
  if (isVectorAnswer(d.value)) return { ok: true, value: d.value.data.result };
  const parsed = QueryResponse.safeParse(d.value);
  if (!parsed.success)
    return { ok: false, error: `unexpected answer to ${promql}: ${parsed.error.issues[0]?.message}` };
  return { ok: true, value: parsed.data.data.result };
}

/**
 * The PromQL for each fact, grouped by the node label so duplicate targets cannot double-count. The
 * value filter comes before the grouping: Prometheus then groups the one series in five that holds,
 * not all of them (the same answer for 0/1 gauges: any duplicate at 1 is a max of 1). Only the facts
 * the report uses are asked: every series read costs Prometheus about the same, whatever it holds.
 */
export function queries(nodeLabel: string) {
  const by = (...l: string[]) => `max by (${[nodeLabel, ...l].join(", ")})`;
  return {
    phase: `${by("phase")} (${METRIC.nodePhase} == 1)`,
    verdict: `${by("verdict")} (${METRIC.nodeVerdict} == 1)`,
    findings: `${by("id", "severity")} (${METRIC.finding} > 0)`,
    nftablesCapable: `${by()} (${METRIC.kernelNftablesCapable})`,
    virtualServers: `${by()} (${METRIC.ipvsVirtualServers})`,
    kubeIpvs0Addresses: `${by()} (${METRIC.kubeIpvs0Addresses})`,
    blackHoled: `${by()} (${METRIC.blackHoledAddresses})`,
    // Any duplicate target whose probe failed: the failure is named, not hidden by one that passed.
    probeFailed: `${by("probe")} (${METRIC.probeSuccess} == 0)`,
    lastScan: `${by()} (${METRIC.lastScanTimestampSeconds})`,
    buildInfo: `${by("version")} (${METRIC.buildInfo})`,
    // Parity: the parity state, the counts (only while compared) and when the snapshot was taken.
    parityState: `${by("state")} (${METRIC.parityState} == 1)`,
    parityServices: `${by("status")} (${METRIC.parityServices})`,
    paritySnapshot: `${by()} (${METRIC.paritySnapshotTimestampSeconds})`,
  } as const;
}
export type QueryName = keyof ReturnType<typeof queries>;

/**
 * Pure: the per-node observations from the query results. A node with some series but no phase is
 * "no-data" with the reason; nodes with no series at all are added by the rollup from the API's list.
 */
export function observationsFromSeries(
  results: Record<QueryName, Sample[]>,
  nodeLabel: string,
  endpoint: string,
  nowS: number,
  staleAfterS: number,
): NodeObservation[] {
  const nodes = new Set<string>();
  const per = <T>(name: QueryName, f: (s: Sample) => T) => {
    const m = new Map<string, T[]>();
    for (const s of results[name]) {
      const n = s.metric[nodeLabel];
      if (!n) continue;
      nodes.add(n);
      const list = m.get(n);
      if (list) list.push(f(s));
      else m.set(n, [f(s)]);
    }
    return m;
  };
  const num = (s: Sample) => Number(s.value[1]);
  const phase = per("phase", (s) => Phase.safeParse(s.metric.phase));
  const verdict = per("verdict", (s) => Verdict.safeParse(s.metric.verdict));
  const findings = per("findings", (s) => ({
    id: s.metric.id ?? "",
    severity: Severity.safeParse(s.metric.severity),
  }));
  const capable = per("nftablesCapable", num);
  const vs = per("virtualServers", num);
  const addrs = per("kubeIpvs0Addresses", num);
  const bh = per("blackHoled", num);
  const failed = per("probeFailed", (s) => s.metric.probe ?? "");
  const last = per("lastScan", num);
  const build = per("buildInfo", (s) => s.metric.version ?? null);
  const parityState = per("parityState", (s) => s.metric.state ?? "");
  const parityServices = per("parityServices", (s) => [s.metric.status ?? "", Number(s.value[1])] as const);
  const paritySnapshot = per("paritySnapshot", num);

  return [...nodes].sort().map((node) => {
    const ph = phase.get(node) ?? [];
    const p = ph.find((x) => x.success);
    if (!p?.success)
      return failedObservation(
        node,
        endpoint,
        "no-data",
        ph.length > 1
          ? "more than one current phase in Prometheus"
          : `proxyscope series present but no current ${METRIC.nodePhase}`,
      );
    const v = (verdict.get(node) ?? []).find((x) => x.success);
    // A gauge can read NaN or +Inf, or a time no Date holds: that is no known scan time, not a throw.
    const ts = last.get(node)?.[0];
    const lastScan = ts !== undefined && !Number.isNaN(new Date(ts * 1000).getTime()) ? ts : null;
    const age = lastScan !== null ? nowS - lastScan : null;
    // "NaN", "+Inf" or a label where a number belongs: unknown, not a NaN outside the report's schema.
    const first = (m: Map<string, number[]>) => {
      const v = m.get(node)?.[0];
      return v !== undefined && Number.isFinite(v) ? v : null;
    };
    const cap = first(capable);
    const findingsOf = (findings.get(node) ?? []).flatMap((f) =>
      f.severity.success ? [{ id: f.id, severity: f.severity.data }] : [],
    );
    const newer = unknownFindings(findingsOf.map((f) => f.id));
    return {
      node,
      outcome: "ok",
      reason: age !== null && age > staleAfterS ? `last scan ${Math.round(age)} s ago` : null,
      endpoint,
      phase: p.data,
      // proxyscope_node_phase_inferred is not queried: whether kube-proxy answered is not said here.
      phaseInferred: null,
      verdict: v?.success ? v.data : "unknown",
      findings: findingsOf,
      agentVersion: build.get(node)?.[0] ?? null,
      scannedAt: lastScan !== null ? new Date(lastScan * 1000).toISOString() : null,
      kernelRelease: null,
      kernelNftablesCapable: cap === null ? null : cap > 0,
      failedProbes: failed.get(node) ?? [],
      ipvsVirtualServers: first(vs),
      kubeIpvs0Addresses: first(addrs),
      blackHoledAddresses: first(bh),
      parity: parityFromSeries(
        parityState.get(node) ?? [],
        parityServices.get(node) ?? [],
        first(paritySnapshot),
        lastScan ?? nowS,
      ),
      ...(newer.length > 0 ? { unknownToCollector: newer } : {}),
    } satisfies NodeObservation;
  });
}

const STATUS = {
  same: "same",
  missing_after: "missingAfter",
  endpoints_differ: "endpointsDiffer",
  new_after: "newAfter",
  arp_only: "arpOnly",
} as const;

/**
 * Pure: a node's parity from its three gauges. No state series (an agent that predates parity, or whose
 * parity probe failed): null, "not reported", never zero. "compared" only with all four counts: a
 * partial set of series is not a reading, and a canary must not pass on it.
 */
export function parityFromSeries(
  states: readonly string[],
  services: readonly (readonly [string, number])[],
  snapshotAt: number | null,
  scannedAt: number,
): NodeObservation["parity"] {
  const current = [...new Set(states)];
  if (current.length !== 1) return null;
  const state = current[0]!;
  const snapshotAgeSeconds = snapshotAt === null ? null : Math.max(0, Math.round(scannedAt - snapshotAt));
  if (state !== "compared") return { state, snapshotAgeSeconds, counts: null, lost: [] };
  const counts: Partial<Record<(typeof STATUS)[keyof typeof STATUS], number>> = {};
  for (const [status, v] of services) {
    const key = STATUS[status as keyof typeof STATUS];
    if (key !== undefined && Number.isInteger(v) && v >= 0) counts[key] = v;
  }
  const { same, missingAfter, endpointsDiffer, newAfter, arpOnly } = counts;
  if (
    same === undefined ||
    missingAfter === undefined ||
    endpointsDiffer === undefined ||
    newAfter === undefined
  )
    return null;
  // Prometheus carries the counts, not the addresses: the lost list is the agent's /parity. arp_only comes
  // only from agents that know it; its absence is "not told", never 0.
  const base = { same, missingAfter, endpointsDiffer, newAfter };
  return {
    state,
    snapshotAgeSeconds,
    counts: arpOnly === undefined ? base : { ...base, arpOnly },
    lost: [],
  };
}

/**
 * Every fact for every node, in one query per fact (a dozen queries, whatever the fleet size), a few
 * at a time under one deadline. The first query that fails fails the gather, named: a fact missing
 * for every node is no report, never a fleet of zeros.
 */
export async function gatherFromPrometheus(opts: PrometheusOptions): Promise<Result<NodeObservation[]>> {
  const q = queries(opts.nodeLabel);
  const names = Object.keys(q) as QueryName[];
  const left = deadline(opts.timeoutMs);
  const failed: { error: string | null } = { error: null };
  const answers = await mapPool(names, QUERY_CONCURRENCY, async (n) => {
    if (failed.error !== null) return null;
    const a = await instantQuery(opts, q[n], left);
    if (!a.ok) failed.error ??= a.error;
    return a.ok ? a.value : null;
  });
  if (failed.error !== null) return { ok: false, error: `Prometheus at ${opts.url}: ${failed.error}` };
  const results = {} as Record<QueryName, Sample[]>;
  for (const [i, n] of names.entries()) results[n] = answers[i]!;
  return {
    ok: true,
    value: observationsFromSeries(results, opts.nodeLabel, opts.url, opts.now(), opts.staleAfterS),
  };
}

const RangeResponse = z.object({
  status: z.literal("success"),
  data: z.object({
    resultType: z.literal("matrix"),
    result: z.array(
      z.object({
        metric: z.record(z.string(), z.string()),
        values: z.array(z.tuple([z.number(), z.string()])),
      }),
    ),
  }),
});

export type BurnDownPoint = { at: string; byPhase: Record<string, number> };

/** Nodes by phase, one series per phase; a node counts once whatever its duplicate targets. */
export function burnDownQuery(nodeLabel: string): string {
  return `count by (phase) (max by (${nodeLabel}, phase) (${METRIC.nodePhase}) == 1)`;
}

/** Pure: a range query's answer (nodes by phase over time) as points, oldest first. */
export function burnDownFromMatrix(body: string, promql: string): Result<BurnDownPoint[]> {
  const d = answerDoc(body);
  if (!d.ok) return d;
  const parsed = RangeResponse.safeParse(d.value);
  if (!parsed.success)
    return { ok: false, error: `unexpected answer to ${promql}: ${parsed.error.issues[0]?.message}` };
  const at = new Map<number, Record<string, number>>();
  for (const series of parsed.data.data.result) {
    const phase = Phase.safeParse(series.metric.phase);
    if (!phase.success) continue;
    for (const [t, v] of series.values) {
      const n = Number(v);
      if (!Number.isFinite(n) || !Number.isFinite(t)) continue;
      at.set(t, { ...(at.get(t) ?? {}), [phase.data]: n });
    }
  }
  return {
    ok: true,
    value: [...at.entries()]
      .sort(([a], [b]) => a - b)
      .map(([t, byPhase]) => ({ at: new Date(t * 1000).toISOString(), byPhase })),
  };
}

/**
 * The migration's burn-down from Prometheus history: nodes by phase every `stepS` over the last
 * `rangeS` (Prometheus answers only what its retention still holds).
 */
export async function gatherBurnDown(
  opts: PrometheusOptions,
  rangeS: number,
  stepS: number,
): Promise<Result<BurnDownPoint[]>> {
  const promql = burnDownQuery(opts.nodeLabel);
  const end = Math.floor(opts.now());
  const params = { query: promql, start: String(end - rangeS), end: String(end), step: String(stepS) };
  const url = queryUrl(opts.url, "/api/v1/query_range", params, opts.timeoutMs);
  const res = await httpGet(url, opts);
  if (!res.ok) return { ok: false, error: res.error.message };
  if (res.status !== 200)
    return { ok: false, error: `${url} answered HTTP ${res.status}: ${res.body.slice(0, 200)}` };
  const parsed = burnDownFromMatrix(res.body, promql);
  return parsed.ok ? parsed : { ok: false, error: `${url}: ${parsed.error}` };
}
