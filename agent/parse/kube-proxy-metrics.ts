import type { KubeProxyMetricsFacts } from "../facts/kube-proxy.js";
import { parsePrometheusText, sumFamilies } from "./prometheus-text.js";
import { unparsable, parsed, type Parsed } from "./result.js";

/**
 * kube-proxy's /metrics reduced to the families we read: every `kubeproxy_*` name, summed over its
 * series, plus `kubernetes_build_info{git_version}`. Go runtime and client families are dropped.
 */
export function parseKubeProxyMetrics(text: string): Parsed<KubeProxyMetricsFacts> {
  const p = parsePrometheusText(text);
  if (!p.ok) return unparsable(p.error);
  const sums = sumFamilies(p.value);
  const metrics: KubeProxyMetricsFacts["metrics"] = {};
  for (const [name, s] of sums) {
    // A NaN or infinite sum cannot be reported as a number; leaving it out reads as "not exported".
    if (!name.startsWith("kubeproxy_") || !Number.isFinite(s.value)) continue;
    metrics[name] = { type: s.type, value: s.value, series: s.series, min: s.min, max: s.max };
  }
  const build = p.value.get("kubernetes_build_info")?.samples[0]?.labels["git_version"] ?? null;
  if (p.value.size === 0) return unparsable("no metric families at all: not a kube-proxy /metrics answer");
  return parsed({ metrics, gitVersion: build, familyCount: p.value.size });
}
