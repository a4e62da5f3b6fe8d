import { httpGet } from "../../common/http.js";
import { parseKubeProxyHealth } from "../parse/kube-proxy-health.js";
import { defineProbe } from "./types.js";

// /healthz on the health address. 503 is an answer (unhealthy proxier, or a node being removed), so
// only statuses other than 200 and 503 are failures.
interface KubeProxyHealthOptions {
  /** kube-proxy's health address (--kube-proxy-health-url), no trailing slash. */
  healthUrl: string;
}

export const kubeProxyHealthProbe = defineProbe("kube-proxy-health", {
  async run(ctx, opts: KubeProxyHealthOptions) {
    const url = `${opts.healthUrl}/healthz`;
    const r = await httpGet(url, { timeoutMs: ctx.callTimeoutMs, maxBytes: 64 * 1024 });
    if (!r.ok) return { ok: false, error: r.error };
    if (r.status !== 200 && r.status !== 503) {
      return {
        ok: false,
        error: { kind: "http-status", message: `${url} answered ${r.status}`, command: url },
      };
    }
    const p = parseKubeProxyHealth(r.status, r.body);
    if (!p.ok) return { ok: false, error: { kind: "garbage", message: `${url}: ${p.error}`, command: url } };
    return { ok: true, facts: p.value };
  },
});
