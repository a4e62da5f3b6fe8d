/**
 * The names of the agent's metrics, in one place: its registry (agent-metrics.ts, node-values.ts) must
 * define them by these names and the collector's PromQL reads them from here, so renaming a metric on one
 * side without the other fails the build. Dashboards and alerts key on them too: a rename is a breaking change.
 */
export const METRIC = {
  buildInfo: "proxyscope_build_info",
  scans: "proxyscope_scans_total",
  scanOverruns: "proxyscope_scan_overruns_total",
  scanFailures: "proxyscope_scan_failures_total",
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
