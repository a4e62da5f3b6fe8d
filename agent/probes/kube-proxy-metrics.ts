import { parseKubeProxyMetrics } from "../parse/kube-proxy-metrics.js";
import { KUBE_PROXY_METRICS_MAX_BYTES, kubeProxyGet } from "./kube-proxy-get.js";
import { defineProbe } from "./types.js";

// Sync failures, staleness and the migration counters, straight from kube-proxy's own exposition.
interface KubeProxyMetricsOptions {
  /** kube-proxy's metrics address (--kube-proxy-metrics-url), no trailing slash. */
  metricsUrl: string;
}

export const kubeProxyMetricsProbe = defineProbe("kube-proxy-metrics", {
  async run(ctx, opts: KubeProxyMetricsOptions) {
    const url = `${opts.metricsUrl}/metrics`;
    const r = await kubeProxyGet(ctx.shared, url, {
      timeoutMs: ctx.callTimeoutMs,
      maxBytes: KUBE_PROXY_METRICS_MAX_BYTES,
    });
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
