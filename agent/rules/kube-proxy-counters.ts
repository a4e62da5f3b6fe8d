import type { NodeFacts } from "../report/schema.js";

export type CounterReading =
  | { state: "value"; value: number }
  | { state: "absent-means-zero" }
  | { state: "not-applicable"; reason: string }
  | { state: "unknown"; reason: string };

// Which kube-proxy families exist in which mode (pkg/proxy/metrics/metrics.go registers per proxier).
// A family that this mode never registers is "not applicable", never zero.
const MODES_OF: Record<string, readonly string[]> = {
  kubeproxy_sync_proxy_rules_nftables_sync_failures_total: ["nftables"],
  kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total: ["nftables"],
  kubeproxy_nftables_localhost_nodeport_rejected_packets_total: ["nftables"],
  kubeproxy_sync_proxy_rules_iptables_restore_failures_total: ["iptables", "ipvs"],
  kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total: ["iptables"],
  kubeproxy_iptables_ct_state_invalid_dropped_packets_total: ["iptables"],
  kubeproxy_iptables_localhost_nodeports_accepted_packets_total: ["iptables"],
};

/** Reads one kube-proxy counter, telling "not exported in this mode" from "zero" from "could not read". */
export function readCounter(facts: NodeFacts, mode: string | null, name: string): CounterReading {
  const modes = MODES_OF[name];
  if (mode !== null && modes && !modes.includes(mode)) {
    return { state: "not-applicable", reason: `${name} is not exported in ${mode} mode` };
  }
  const m = facts.kubeProxyMetrics;
  if (m === null) return { state: "unknown", reason: "kube-proxy /metrics was not read" };
  const s = m.metrics[name];
  if (s !== undefined) return { state: "value", value: s.value };
  // Failure counters are created on first failure in recent releases: absent on a healthy node is zero.
  return { state: "absent-means-zero" };
}

export function counterValue(r: CounterReading): number | null {
  if (r.state === "value") return r.value;
  if (r.state === "absent-means-zero") return 0;
  return null;
}

export function describeCounter(r: CounterReading): string | number {
  if (r.state === "value") return r.value;
  if (r.state === "absent-means-zero") return 0;
  return `n/a (${r.reason})`;
}

export function gauge(facts: NodeFacts, name: string): number | null {
  return facts.kubeProxyMetrics?.metrics[name]?.value ?? null;
}
