import { parseProxyMode } from "../parse/kube-proxy-mode.js";
import { kubeProxyGet, PROXY_MODE_MAX_BYTES } from "./kube-proxy-get.js";
import { defineProbe } from "./types.js";

// The mode kube-proxy really runs, from its own mouth: the ConfigMap may not be what the pod loaded.
export interface KubeProxyModeOptions {
  /** kube-proxy's metrics address (--kube-proxy-metrics-url), no trailing slash. */
  metricsUrl: string;
}

export const kubeProxyModeProbe = defineProbe("kube-proxy-mode", {
  async run(ctx, opts: KubeProxyModeOptions) {
    const url = `${opts.metricsUrl}/proxyMode`;
    const r = await kubeProxyGet(ctx.shared, url, {
      timeoutMs: ctx.callTimeoutMs,
      maxBytes: PROXY_MODE_MAX_BYTES,
    });
    if (!r.ok) return { ok: false, error: r.error };
    if (r.status !== 200) {
      return {
        ok: false,
        error: { kind: "http-status", message: `${url} answered ${r.status}`, command: url },
      };
    }
    const p = parseProxyMode(r.body);
    if (!p.ok) return { ok: false, error: { kind: "garbage", message: `${url}: ${p.error}`, command: url } };
    return { ok: true, facts: p.value };
  },
});
