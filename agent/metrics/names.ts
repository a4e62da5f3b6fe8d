import { BUILD_INFO } from "../../common/build-info.js";

/**
 * The names of the agent's metrics, in one place: its registry (agent-metrics.ts, node-values.ts) must
 * define them by these names and the collector's PromQL reads them from here, so renaming a metric on one
 * side without the other fails the build. Dashboards and alerts key on them too: a rename is a breaking change.
 */
export const METRIC = {
  // Both programs export it (common/build-info.ts); named here so the agent's list is whole.
  buildInfo: BUILD_INFO.name,
  scans: "proxyscope_scans_total",
  scanOverruns: "proxyscope_scan_overruns_total",
  scanFailures: "proxyscope_scan_failures_total",
  scanHeapReleases: "proxyscope_scan_heap_releases_total",
  scanHeapReleasedBytes: "proxyscope_scan_heap_released_bytes_total",
  nodePhase: "proxyscope_node_phase",
  nodeVerdict: "proxyscope_node_verdict",
  nodePhaseInferred: "proxyscope_node_phase_inferred",
  kernelNftablesCapable: "proxyscope_kernel_nftables_capable",
  ipvsVirtualServers: "proxyscope_ipvs_virtual_servers",
  ipvsRealServers: "proxyscope_ipvs_real_servers",
  ipvsConnections: "proxyscope_ipvs_connections_total",
  ipvsIncomingPackets: "proxyscope_ipvs_incoming_packets_total",
  ipvsOutgoingPackets: "proxyscope_ipvs_outgoing_packets_total",
  ipvsIncomingBytes: "proxyscope_ipvs_incoming_bytes_total",
  ipvsOutgoingBytes: "proxyscope_ipvs_outgoing_bytes_total",
  ipvsKubeProxyEstablishedConnections: "proxyscope_ipvs_kube_proxy_established_connections",
  kubeIpvs0Present: "proxyscope_kube_ipvs0_present",
  kubeIpvs0Addresses: "proxyscope_kube_ipvs0_addresses",
  blackHoledAddresses: "proxyscope_black_holed_addresses",
  kubeProxyIpsets: "proxyscope_kube_proxy_ipsets",
  kubeProxyIptablesChains: "proxyscope_kube_proxy_iptables_chains",
  nftablesKubeProxyTablePresent: "proxyscope_nftables_kube_proxy_table_present",
  kubeProxyLastSyncTimestampSeconds: "proxyscope_kube_proxy_last_sync_timestamp_seconds",
  kubeProxySyncFailures: "proxyscope_kube_proxy_sync_failures_total",
  kubeProxyCleanupFailures: "proxyscope_kube_proxy_cleanup_failures_total",
  parityState: "proxyscope_parity_state",
  parityServices: "proxyscope_parity_services",
  paritySnapshotTimestampSeconds: "proxyscope_parity_snapshot_timestamp_seconds",
  nodeInfo: "proxyscope_node_info",
  finding: "proxyscope_finding",
  findingActive: "proxyscope_finding_active",
  findings: "proxyscope_findings",
  probeSuccess: "proxyscope_probe_success",
  probeDurationSeconds: "proxyscope_probe_duration_seconds",
  lastScanTimestampSeconds: "proxyscope_last_scan_timestamp_seconds",
  lastScanDurationSeconds: "proxyscope_last_scan_duration_seconds",
  sourceAgeSeconds: "proxyscope_source_age_seconds",
} as const;
export type MetricName = (typeof METRIC)[keyof typeof METRIC];

/**
 * A stable metric keeps its name, type and label names across releases (test/unit/metrics/stable-metrics.test.ts
 * holds it to test/fixtures/golden/metrics/agent-stable.txt); an experimental one may change or go in any
 * release. docs/compatibility.md states the promise.
 */
export type Stability = "stable" | "experimental";

const stable = "stable" as const;
const experimental = "experimental" as const;

// Stable: what the collector's PromQL, the shipped alerts and dashboards, and node_exporter-style
// dashboards read. Experimental: the scan thread's memory handling and the nf_tables read cache, which
// exist to tune the agent and change with it.
export const METRIC_STABILITY = {
  buildInfo: stable,
  scans: stable,
  scanOverruns: stable,
  scanFailures: stable,
  scanHeapReleases: experimental,
  scanHeapReleasedBytes: experimental,
  nodePhase: stable,
  nodeVerdict: stable,
  nodePhaseInferred: stable,
  kernelNftablesCapable: stable,
  ipvsVirtualServers: stable,
  ipvsRealServers: stable,
  ipvsConnections: stable,
  ipvsIncomingPackets: stable,
  ipvsOutgoingPackets: stable,
  ipvsIncomingBytes: stable,
  ipvsOutgoingBytes: stable,
  // New in this release: its name and meaning may still change with what the switch-planning needs.
  ipvsKubeProxyEstablishedConnections: experimental,
  kubeIpvs0Present: stable,
  kubeIpvs0Addresses: stable,
  blackHoledAddresses: stable,
  kubeProxyIpsets: stable,
  kubeProxyIptablesChains: stable,
  nftablesKubeProxyTablePresent: stable,
  kubeProxyLastSyncTimestampSeconds: stable,
  kubeProxySyncFailures: stable,
  kubeProxyCleanupFailures: stable,
  parityState: stable,
  parityServices: stable,
  paritySnapshotTimestampSeconds: stable,
  nodeInfo: stable,
  finding: stable,
  findingActive: stable,
  findings: stable,
  probeSuccess: stable,
  probeDurationSeconds: stable,
  lastScanTimestampSeconds: stable,
  lastScanDurationSeconds: stable,
  sourceAgeSeconds: experimental,
} as const satisfies Record<keyof typeof METRIC, Stability>;

const BY_NAME = new Map<string, Stability>(
  (Object.keys(METRIC) as (keyof typeof METRIC)[]).map((k) => [METRIC[k], METRIC_STABILITY[k]]),
);

/** A metric's stability by its exported name; null for a name that is not the agent's. */
export function metricStability(name: string): Stability | null {
  return BY_NAME.get(name) ?? null;
}

/**
 * Stable metrics on their way out (docs/compatibility.md): still exported, with the same name, type and
 * labels, for the release that announces it; the doc names what to read instead.
 */
export const METRIC_DEPRECATED: Partial<Record<keyof typeof METRIC, { use: string; removedIn: string }>> = {
  // A second name for what proxyscope_finding already says: the count is one PromQL away, and a
  // reader had three names that differ by an "s" and a suffix to choose from.
  findings: { use: "count by (severity) (proxyscope_finding)", removedIn: "0.3.0" },
};

const DEPRECATED_BY_NAME = new Map<string, { use: string; removedIn: string } | undefined>(
  (Object.keys(METRIC_DEPRECATED) as (keyof typeof METRIC)[]).map((k) => [METRIC[k], METRIC_DEPRECATED[k]]),
);

/** What to read instead of a deprecated metric, by its exported name; null when it is not deprecated. */
export function metricDeprecation(name: string): { use: string; removedIn: string } | null {
  return DEPRECATED_BY_NAME.get(name) ?? null;
}
