import { httpGet } from "../../common/http.js";
import { parseConfigz } from "../parse/kube-proxy-configz.js";
import { defineProbe } from "./types.js";

// The configuration kube-proxy is running with, to compare with /proxyMode and the ConfigMap.
interface KubeProxyConfigzOptions {
  /** kube-proxy's metrics address (--kube-proxy-metrics-url), no trailing slash. */
  metricsUrl: string;
}

export const kubeProxyConfigzProbe = defineProbe("kube-proxy-configz", {
  async run(ctx, opts: KubeProxyConfigzOptions) {
    const url = `${opts.metricsUrl}/configz`;
    const r = await httpGet(url, { timeoutMs: ctx.callTimeoutMs, maxBytes: 1024 * 1024 });
    if (!r.ok) return { ok: false, error: r.error };
    if (r.status !== 200) {
      return {
        ok: false,
        error: { kind: "http-status", message: `${url} answered ${r.status}`, command: url },
      };
    }
    const p = parseConfigz(r.body);
    if (!p.ok) return { ok: false, error: { kind: "garbage", message: `${url}: ${p.error}`, command: url } };
    return { ok: true, facts: p.value };
  },
});
