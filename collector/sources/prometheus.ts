import type { NodeObservation } from "../report/schema.js";
import type { Result } from "../../common/result.js";
import { mapPool } from "../gather/pool.js";
import { deadline, instantQuery, type PrometheusOptions } from "./prometheus/query.js";
import { observationsFromIndex, queries, seriesIndex, type QueryName } from "./prometheus/series.js";

// The fleet from Prometheus: the agents' gauges, one query per fact (prometheus/series.ts), asked through
// prometheus/query.ts; the burn-down over time in prometheus/burn-down.ts. This file stays the entry a
// build's readers load by path (bench/fleet/prometheus.ts compares the queries of two builds' dist/).
export {
  gatherBurnDown,
  burnDownFromMatrix,
  burnDownQuery,
  type BurnDownPoint,
} from "./prometheus/burn-down.js";
export { parityFromSeries } from "./prometheus/parity.js";
export { instantQuery, parseQueryAnswer, queryUrl, type PrometheusOptions } from "./prometheus/query.js";
export { observationsFromSeries, queries, type QueryName } from "./prometheus/series.js";

/** Queries in flight at once: a Prometheus evaluates about one per core; more only hold more bodies. */
export const QUERY_CONCURRENCY = 4;

/**
 * Every fact for every node, in one query per fact (a dozen queries, whatever the fleet size), a few
 * at a time under one deadline. The first query that fails fails the gather, named: a fact missing
 * for every node is no report, never a fleet of zeros. Each answer is indexed by node as it arrives
 * and then dropped: only the last is indexed after Prometheus's last evaluation, not all thirteen.
 */
export async function gatherFromPrometheus(opts: PrometheusOptions): Promise<Result<NodeObservation[]>> {
  const q = queries(opts.nodeLabel);
  const names = Object.keys(q) as QueryName[];
  const left = deadline(opts.timeoutMs);
  const failed: { error: string | null } = { error: null };
  const index = seriesIndex(opts.nodeLabel);
  await mapPool(names, QUERY_CONCURRENCY, async (n) => {
    if (failed.error !== null) return;
    const a = await instantQuery(opts, q[n], left);
    if (!a.ok) failed.error ??= a.error;
    else index.add(n, a.value);
  });
  if (failed.error !== null) return { ok: false, error: `Prometheus at ${opts.url}: ${failed.error}` };
  return {
    ok: true,
    value: observationsFromIndex(index.series, opts.url, opts.now(), opts.staleAfterS),
  };
}
