import { z } from "zod";
import { METRIC, Phase } from "../../../agent/contract.js";
import { httpGet } from "../../../common/http.js";
import type { Result } from "../../../common/result.js";
import { answerDoc, queryUrl, type PrometheusOptions } from "./query.js";

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
