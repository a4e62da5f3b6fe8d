import {
  readCounter as readFromCatalogue,
  type CounterReading,
} from "../parse/kube-proxy-metrics-catalogue.js";
import type { NodeFacts } from "../report/schema.js";

/** Every kube-proxy counter of a failed rule sync; the catalogue says which one a mode exports. */
export const SYNC_FAILURE_COUNTERS = [
  "kubeproxy_sync_proxy_rules_nftables_sync_failures_total",
  "kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
  "kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total",
] as const;

export const CLEANUP_FAILURE_COUNTER = "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total";
export const LAST_SYNC = "kubeproxy_sync_proxy_rules_last_timestamp_seconds";
export const LAST_QUEUED = "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds";

type Reading = CounterReading | { state: "unknown" };

/**
 * One kube-proxy counter as the rules see it: the catalogue (which mode and version export it, and
 * whether absence means zero) decides; "unknown" when /metrics could not be read or the mode is unknown.
 */
export function readCounter(
  facts: Pick<NodeFacts, "kubeProxyMetrics">,
  mode: string | null,
  name: string,
): Reading {
  if (facts.kubeProxyMetrics === null || mode === null) return { state: "unknown" };
  return readFromCatalogue(facts.kubeProxyMetrics, name, mode);
}

/**
 * The counters summed over those this mode exports; null with no /proxyMode answer (nobody can then tell
 * a counter that does not apply from a zero), with /metrics unread, or when none of them applies.
 */
export function counterSum(
  facts: Pick<NodeFacts, "kubeProxyMetrics">,
  mode: string | null,
  names: readonly string[],
): number | null {
  if (mode === null || facts.kubeProxyMetrics === null) return null;
  const values = names.map((n) => counterValue(readCounter(facts, mode, n))).filter((v) => v !== null);
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0);
}

export function counterValue(r: Reading): number | null {
  if (r.state === "value") return r.value;
  if (r.state === "absent-means-zero") return 0;
  return null;
}

/**
 * How a cumulative counter moved since the previous scan: "rose" (including a kube-proxy restart, after
 * which everything it counts happened since), "same", or "unknown" (no previous scan, another mode then —
 * a restart into another mode resets the counters — or either value unread).
 */
export function counterTrend(
  current: Pick<NodeFacts, "kubeProxyMetrics">,
  previous: Pick<NodeFacts, "kubeProxyMetrics" | "proxyMode"> | null,
  mode: string,
  name: string,
): { trend: "rose" | "same" | "unknown"; before: number | null } {
  const now = counterValue(readCounter(current, mode, name));
  if (previous === null || now === null) return { trend: "unknown", before: null };
  const prevMode = previous.proxyMode ? previous.proxyMode.mode.trim() || null : null;
  if (prevMode !== mode) return { trend: "unknown", before: null };
  const before = counterValue(readCounter(previous, mode, name));
  if (before === null) return { trend: "unknown", before: null };
  return { trend: now > before || (now < before && now > 0) ? "rose" : "same", before };
}

/** For evidence: a number, or why there is none ("not applicable" is never shown as 0). */
export function describeCounter(r: Reading): string | number {
  if (r.state === "value") return r.value;
  if (r.state === "absent-means-zero") return 0;
  if (r.state === "not-applicable") return "not applicable in this mode or version";
  return r.state === "missing" ? "missing from kube-proxy's /metrics" : "unknown (/metrics not read)";
}

/** A gauge summed over its series (counts such as Services without local endpoints). */
export function gauge(facts: Pick<NodeFacts, "kubeProxyMetrics">, name: string): number | null {
  return facts.kubeProxyMetrics?.metrics[name]?.value ?? null;
}

/**
 * The oldest (min) or newest (max) series of a timestamp gauge. From v1.33 kube-proxy exports one
 * series per IP family; a dual-stack node is stale when either family is, so staleness reads the min.
 */
export function timestamp(
  facts: Pick<NodeFacts, "kubeProxyMetrics">,
  name: string,
  which: "oldest" | "newest",
): number | null {
  const s = facts.kubeProxyMetrics?.metrics[name];
  if (!s) return null;
  return which === "oldest" ? s.min : s.max;
}
