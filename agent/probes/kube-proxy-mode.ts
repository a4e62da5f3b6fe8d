import { httpGet } from "../../common/http.js";
import { parseProxyMode } from "../parse/kube-proxy-mode.js";
import { defineProbe } from "./types.js";

// The mode kube-proxy really runs, from its own mouth: the ConfigMap may not be what the pod loaded.
export const kubeProxyModeProbe = defineProbe("kube-proxy-mode", {
  async run(ctx) {
    const url = `${ctx.kubeProxyMetricsUrl}/proxyMode`;
    const r = await httpGet(url, { timeoutMs: ctx.callTimeoutMs, maxBytes: 4096 });
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
