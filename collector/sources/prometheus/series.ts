import { METRIC, Phase, Severity, Verdict } from "../../../agent/contract.js";
import { failedObservation, unknownFindings } from "../../gather/observe.js";
import type { NodeObservation } from "../../report/schema.js";
import { parityFromSeries } from "./parity.js";
import type { Sample } from "./query.js";

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
 * Each query's samples by node, reduced to what an observation reads; `nodes`: every node named. Answers
 * are folded in one query at a time (`add`), so the Prometheus source indexes each answer as it arrives
 * and only the last one is indexed after Prometheus's last evaluation (the rest overlap the wait).
 */
export function seriesIndex(nodeLabel: string) {
  const nodes = new Set<string>();
  const per = <T>(f: (s: Sample) => T) => {
    const m = new Map<string, T[]>();
    const add = (samples: readonly Sample[]) => {
      for (const s of samples) {
        const n = s.metric[nodeLabel];
        if (!n) continue;
        nodes.add(n);
        const list = m.get(n);
        if (list) list.push(f(s));
        else m.set(n, [f(s)]);
      }
    };
    return { m, add };
  };
  const num = (s: Sample) => Number(s.value[1]);
  const q = {
    phase: per((s) => Phase.safeParse(s.metric.phase)),
    verdict: per((s) => Verdict.safeParse(s.metric.verdict)),
    findings: per((s) => ({ id: s.metric.id ?? "", severity: Severity.safeParse(s.metric.severity) })),
    nftablesCapable: per(num),
    virtualServers: per(num),
    kubeIpvs0Addresses: per(num),
    blackHoled: per(num),
    probeFailed: per((s) => s.metric.probe ?? ""),
    lastScan: per(num),
    buildInfo: per((s) => s.metric.version ?? null),
    parityState: per((s) => s.metric.state ?? ""),
    parityServices: per((s) => [s.metric.status ?? "", Number(s.value[1])] as const),
    paritySnapshot: per(num),
  } satisfies Record<QueryName, { add: (samples: readonly Sample[]) => void }>;
  return {
    add: (name: QueryName, samples: readonly Sample[]) => q[name].add(samples),
    series: {
      nodes,
      phase: q.phase.m,
      verdict: q.verdict.m,
      findings: q.findings.m,
      capable: q.nftablesCapable.m,
      vs: q.virtualServers.m,
      addrs: q.kubeIpvs0Addresses.m,
      bh: q.blackHoled.m,
      failed: q.probeFailed.m,
      last: q.lastScan.m,
      build: q.buildInfo.m,
      parityState: q.parityState.m,
      parityServices: q.parityServices.m,
      paritySnapshot: q.paritySnapshot.m,
    },
  };
}
type NodeSeries = ReturnType<typeof seriesIndex>["series"];

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
  const idx = seriesIndex(nodeLabel);
  for (const name of Object.keys(queries(nodeLabel)) as QueryName[]) idx.add(name, results[name]);
  return observationsFromIndex(idx.series, endpoint, nowS, staleAfterS);
}

/** Pure: the observations of every node an index holds, sorted by node name. */
export function observationsFromIndex(
  s: NodeSeries,
  endpoint: string,
  nowS: number,
  staleAfterS: number,
): NodeObservation[] {
  return [...s.nodes].sort().map((node) => observationOf(node, s, endpoint, nowS, staleAfterS));
}

/** "NaN", "+Inf" or a label where a number belongs: unknown, not a NaN outside the report's schema. */
function firstFinite(values: readonly number[] | undefined): number | null {
  const v = values?.[0];
  return v !== undefined && Number.isFinite(v) ? v : null;
}

/** One node's observation from its series. */
function observationOf(
  node: string,
  s: NodeSeries,
  endpoint: string,
  nowS: number,
  staleAfterS: number,
): NodeObservation {
  const ph = s.phase.get(node) ?? [];
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
  const v = (s.verdict.get(node) ?? []).find((x) => x.success);
  // A gauge can read NaN or +Inf, or a time no Date holds: that is no known scan time, not a throw.
  const ts = s.last.get(node)?.[0];
  const lastScan = ts !== undefined && !Number.isNaN(new Date(ts * 1000).getTime()) ? ts : null;
  const age = lastScan !== null ? nowS - lastScan : null;
  const first = (m: Map<string, number[]>) => firstFinite(m.get(node));
  const cap = first(s.capable);
  const findingsOf = (s.findings.get(node) ?? []).flatMap((f) =>
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
    agentVersion: s.build.get(node)?.[0] ?? null,
    scannedAt: lastScan !== null ? new Date(lastScan * 1000).toISOString() : null,
    kernel: null,
    kernelNftables: cap === null ? null : { capable: cap > 0, from: "agent" },
    failedProbes: s.failed.get(node) ?? [],
    ipvsVirtualServers: first(s.vs),
    kubeIpvs0Addresses: first(s.addrs),
    blackHoledAddresses: first(s.bh),
    parity: parityFromSeries(
      s.parityState.get(node) ?? [],
      s.parityServices.get(node) ?? [],
      first(s.paritySnapshot),
      lastScan ?? nowS,
    ),
    ...(newer.length > 0 ? { unknownToCollector: newer } : {}),
  } satisfies NodeObservation;
}
