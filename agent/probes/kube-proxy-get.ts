import { httpGet, type HttpResult } from "../../common/http.js";
import type { ScanShared } from "./scan-cache.js";

/** The caps both readers of an answer use, so they share one GET: /proxyMode is a word, /metrics ~100 KB. */
export const PROXY_MODE_MAX_BYTES = 4096;
export const KUBE_PROXY_METRICS_MAX_BYTES = 8 * 1024 * 1024;

/**
 * One GET of a kube-proxy endpoint per scan: in `serve` the ipvs-mode gate reads /proxyMode and /metrics
 * before the deep reads, and the kube-proxy probes read the same answers; each asked for its own before.
 */
export function kubeProxyGet(
  shared: ScanShared | undefined,
  url: string,
  opts: { timeoutMs: number; maxBytes: number },
): Promise<HttpResult> {
  if (shared === undefined) return httpGet(url, opts);
  const key = `${opts.maxBytes} ${url}`;
  let answer = shared.kubeProxyAnswers.get(key);
  if (answer === undefined) {
    answer = httpGet(url, opts);
    shared.kubeProxyAnswers.set(key, answer);
  }
  return answer;
}
