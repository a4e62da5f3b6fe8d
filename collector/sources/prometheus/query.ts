import { z } from "zod";
import { httpGet } from "../../../common/http.js";
import type { Result } from "../../../common/result.js";

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
export type Sample = z.infer<typeof Sample>;

/** Pure: the query's URL, carrying the time left as Prometheus's own evaluation timeout. */
export function queryUrl(base: string, path: string, params: Record<string, string>, leftMs: number): string {
  const q = new URLSearchParams({ ...params, timeout: (Math.max(1, leftMs) / 1000).toFixed(3) });
  return `${base.replace(/\/+$/, "")}${path}?${q}`;
}

/** A deadline from now: the milliseconds left, never below zero. */
export function deadline(ms: number): () => number {
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

/** Pure: an answer body as JSON, or Prometheus's own error named in a bounded excerpt (it answers 200 with status "error" too). */
export function answerDoc(body: string): Result<unknown> {
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

/** Pure: an instant query's answer body, judged: the vector's samples, or why there are none. */
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
