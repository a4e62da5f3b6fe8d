import type { KubeProxyMetricsFacts } from "../facts/kube-proxy.js";
import { parsePrometheusText, sumFamilies, type Sample } from "./prometheus-text.js";
import { unparsable, parsed } from "./result.js";
import type { Result } from "../../common/result.js";

/**
 * kube-proxy's /metrics reduced to the families we read: every `kubeproxy_*` name, summed over its
 * series, plus `kubernetes_build_info{git_version}`. Go runtime and client families are dropped.
 */
export function parseKubeProxyMetrics(text: string): Result<KubeProxyMetricsFacts> {
  const p = parsePrometheusText(text);
  if (!p.ok) return unparsable(p.error);
  const sums = sumFamilies(p.value);
  const metrics: KubeProxyMetricsFacts["metrics"] = {};
  for (const [name, s] of sums) {
    // A NaN or infinite sum cannot be reported as a number; leaving it out reads as "not exported".
    if (!name.startsWith("kubeproxy_") || !Number.isFinite(s.value)) continue;
    metrics[name] = { type: s.type, value: s.value, series: s.series, min: s.min, max: s.max };
    const byLabel = splitByLabel(p.value.get(name)?.samples ?? []);
    if (byLabel) metrics[name].byLabel = byLabel;
  }
  const build = p.value.get("kubernetes_build_info")?.samples[0]?.labels["git_version"] ?? null;
  if (p.value.size === 0) return unparsable("no metric families at all: not a kube-proxy /metrics answer");
  return parsed({ metrics, gitVersion: build, familyCount: p.value.size });
}

// Labels split out, each with the values kube-proxy gives it: sync_proxy_rules_no_local_endpoints_total's
// traffic_policy is "internal" or "external" (pkg/proxy/metrics/metrics.go; the ipvs and nftables proxiers
// set both). Other values are dropped: a label is only split when its values are bounded.
const SPLIT_LABELS: Readonly<Record<string, readonly string[]>> = {
  traffic_policy: ["internal", "external"],
};

function splitByLabel(samples: readonly Sample[]): Record<string, Record<string, number>> | null {
  const out: Record<string, Record<string, number>> = {};
  for (const [label, values] of Object.entries(SPLIT_LABELS)) {
    const withIt = samples.filter((x) => values.includes(x.labels[label] ?? "") && Number.isFinite(x.value));
    if (withIt.length === 0) continue;
    const sums: Record<string, number> = Object.fromEntries(values.map((v) => [v, 0]));
    for (const x of withIt) sums[x.labels[label]!] = (sums[x.labels[label]!] ?? 0) + x.value;
    out[label] = sums;
  }
  return Object.keys(out).length > 0 ? out : null;
}
