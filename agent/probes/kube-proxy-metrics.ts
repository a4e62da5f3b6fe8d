import { httpGet } from "../../common/http.js";
import { parseKubeProxyMetrics } from "../parse/kube-proxy-metrics.js";
import { defineProbe } from "./types.js";

// A kube-proxy /metrics is ~100 KB; 8 MiB leaves room for many label sets and still bounds memory.
const MAX_BYTES = 8 * 1024 * 1024;

// Sync failures, staleness and the migration counters, straight from kube-proxy's own exposition.
export const kubeProxyMetricsProbe = defineProbe("kube-proxy-metrics", {
  async run(ctx) {
    const url = `${ctx.kubeProxyMetricsUrl}/metrics`;
    const r = await httpGet(url, { timeoutMs: ctx.callTimeoutMs, maxBytes: MAX_BYTES });
    if (!r.ok) return { ok: false, error: r.error };
    if (r.status !== 200) {
      return {
        ok: false,
        error: { kind: "http-status", message: `${url} answered ${r.status}`, command: url },
      };
    }
    const p = parseKubeProxyMetrics(r.body);
    if (!p.ok) return { ok: false, error: { kind: "garbage", message: `${url}: ${p.error}`, command: url } };
    return { ok: true, facts: p.value };
  },
});
