import type { KubeProxyMetricsFacts } from "../facts/kube-proxy.js";

/*
 * The kube-proxy metrics our rules read, where they come from and when they exist. Sources
 * (kubernetes/kubernetes, read through the code index):
 * - pkg/proxy/metrics/metrics.go (the version with `RegisterMetrics(mode kubeproxyconfig.ProxyMode)`,
 *   indexed at blob id 75480766): names, types, HELP text and which mode registers what.
 * - pkg/proxy/metrics/metrics_linux.go @26c03096: nfacctMetricCollector and nftCounterMetricCollector
 *   (custom collectors: they emit a sample only when the kernel counter could be read).
 * - pkg/proxy/metrics/metrics_linux_test.go: kubeproxy_nftables_localhost_nodeport_rejected_packets_total
 *   with labels {ip_family, protocol} (KEP-6032, v1.37).
 * - CHANGELOG-1.31: kubeproxy_iptables_localhost_nodeports_accepted_packets_total added (PR #125015).
 * - PR #129173 "kube-proxy implement dual stack metrics" (merged 2024-12-12, so v1.33): per-family
 *   metrics became *Vec with label `ip_family`; the v1.36 metrics reference lists which ones.
 *
 * Why "absent means zero": an unlabeled Counter is exported as 0 from registration, but a CounterVec
 * exports no series until its first `WithLabelValues(...).Inc()`, and client_golang drops a family
 * with no series from the exposition. So from v1.33 the failure counters appear only after a first
 * failure, while before v1.33 they are always there. Custom collectors (nfacct, nft counters) emit
 * nothing when reading the kernel counter fails, so their absence is never a zero.
 */

type ProxyMode = "iptables" | "ipvs" | "nftables";
type MetricKind = "counter" | "gauge" | "histogram";

interface CatalogueEntry {
  type: MetricKind;
  /** Modes whose proxier registers it (RegisterMetrics' switch); all three for the core metrics. */
  modes: readonly ProxyMode[];
  /** First minor release that has it, when it is newer than what we support (v1.31). */
  sinceMinor: number | null;
  /** From this minor on the family carries `ip_family` (or other) labels and is a *Vec. */
  labeledSinceMinor: number | null;
  /** A custom collector: its absence means the kernel counter could not be read. */
  custom: boolean;
  help: string;
}

const ALL: readonly ProxyMode[] = ["iptables", "ipvs", "nftables"];

export const KUBE_PROXY_METRICS: Readonly<Record<string, CatalogueEntry>> = {
  kubeproxy_sync_proxy_rules_duration_seconds: {
    type: "histogram",
    modes: ALL,
    sinceMinor: null,
    labeledSinceMinor: 33,
    custom: false,
    help: "SyncProxyRules latency in seconds",
  },
  kubeproxy_sync_proxy_rules_last_timestamp_seconds: {
    type: "gauge",
    modes: ALL,
    sinceMinor: null,
    labeledSinceMinor: 33,
    custom: false,
    help: "The last time proxy rules were successfully synced",
  },
  kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds: {
    type: "gauge",
    modes: ALL,
    sinceMinor: null,
    labeledSinceMinor: 33,
    custom: false,
    help: "The last time a sync of proxy rules was queued",
  },
  kubeproxy_sync_proxy_rules_iptables_restore_failures_total: {
    type: "counter",
    modes: ["iptables", "ipvs"],
    sinceMinor: null,
    labeledSinceMinor: 33,
    custom: false,
    help: "Cumulative proxy iptables restore failures",
  },
  kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total: {
    type: "counter",
    modes: ["iptables"],
    sinceMinor: null,
    labeledSinceMinor: 33,
    custom: false,
    help: "Cumulative proxy iptables partial restore failures",
  },
  kubeproxy_sync_proxy_rules_nftables_sync_failures_total: {
    type: "counter",
    modes: ["nftables"],
    sinceMinor: null,
    labeledSinceMinor: 33,
    custom: false,
    help: "Cumulative proxy nftables sync failures",
  },
  kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total: {
    type: "counter",
    modes: ["nftables"],
    sinceMinor: null,
    labeledSinceMinor: 33,
    custom: false,
    help: "Cumulative proxy nftables cleanup failures",
  },
  kubeproxy_iptables_ct_state_invalid_dropped_packets_total: {
    type: "counter",
    modes: ["iptables"],
    sinceMinor: null,
    labeledSinceMinor: null,
    custom: true,
    help: "packets dropped by iptables to work around conntrack problems",
  },
  kubeproxy_iptables_localhost_nodeports_accepted_packets_total: {
    type: "counter",
    modes: ["iptables"],
    sinceMinor: 31,
    labeledSinceMinor: null,
    custom: true,
    help: "Number of packets accepted on nodeports of loopback interface",
  },
  kubeproxy_nftables_localhost_nodeport_rejected_packets_total: {
    type: "counter",
    modes: ["nftables"],
    sinceMinor: 37,
    labeledSinceMinor: 37,
    custom: true,
    help: "Number of packets rejected on localhost NodePorts. UDP and SCTP are always rejected; TCP is rejected when the localhost NodePort proxy is not running",
  },
  kubeproxy_proxy_healthz_total: {
    type: "counter",
    modes: ALL,
    sinceMinor: null,
    labeledSinceMinor: 0, // CounterVec{code} from the start
    custom: false,
    help: "Cumulative proxy healthz HTTP status",
  },
};

export type CounterReading =
  | { state: "value"; value: number }
  | { state: "not-applicable" }
  | { state: "absent-means-zero" }
  | { state: "missing" };

/** Minor version from a git_version such as "v1.33.1" or "v1.37.0-alpha.1+abc"; null if unknown. */
export function minorOf(gitVersion: string | null): number | null {
  const m = /^v?1\.(\d+)(?:\.|$)/.exec(gitVersion ?? "");
  return m ? Number(m[1]) : null;
}

/**
 * What a metric's absence means for this kube-proxy, given the mode /proxyMode answered. `value`
 * is the sum over series (a histogram is read by its `_count`/`_sum` names). Without a known
 * version the newest behaviour is assumed.
 */
export function readCounter(facts: KubeProxyMetricsFacts, name: string, mode: string): CounterReading {
  const base = name.replace(/_(count|sum)$/, "");
  const entry = KUBE_PROXY_METRICS[name] ?? (base !== name ? KUBE_PROXY_METRICS[base] : undefined);
  const present = facts.metrics[name];
  const effective = mode === "" ? "iptables" : mode; // kube-proxy's own default on Linux
  if (!entry) return present ? { state: "value", value: present.value } : { state: "missing" };
  if (!(entry.modes as readonly string[]).includes(effective)) {
    return present ? { state: "value", value: present.value } : { state: "not-applicable" };
  }
  if (present) return { state: "value", value: present.value };
  const minor = minorOf(facts.gitVersion);
  if (entry.sinceMinor !== null && minor !== null && minor < entry.sinceMinor)
    return { state: "not-applicable" };
  const labeled = entry.labeledSinceMinor !== null && (minor === null || minor >= entry.labeledSinceMinor);
  if (entry.type === "counter" && labeled && !entry.custom) return { state: "absent-means-zero" };
  return { state: "missing" };
}
