import { KUBE_PROXY_TABLE_FAMILIES } from "../facts/kube-proxy-table.js";
import { ParityFacts } from "../facts/parity.js";
import type { MetricName } from "./names.js";
import { Phase, SEVERITIES, Verdict, type NodeReport } from "../report/schema.js";
import { FINDING_IDS, FINDING_NEEDS } from "../rules/catalogue.js";
import { summaryOf, viewOfReport } from "../view/summary.js";

export type Labels = Record<string, string>;
export interface Series {
  labels: Labels;
  value: number;
}

/**
 * Every metric derived from a NodeReport. Labels are bounded by design: probe names, finding ids,
 * enum values and netfilter families, and in proxyscope_node_info one value per label per node; never
 * an address or a Service name. Gauges unless `type` says counter.
 */
export const NODE_METRICS = {
  proxyscope_node_phase: {
    help: "What kube-proxy really runs on this node: 1 for the current phase",
    labels: ["phase"],
  },
  proxyscope_node_verdict: {
    help: "The node's migration verdict: 1 for the current verdict",
    labels: ["verdict"],
  },
  proxyscope_node_phase_inferred: {
    help: "1 when kube-proxy did not say its mode and the phase is inferred from kernel state (verdict unknown unless something is broken)",
    labels: [],
  },
  proxyscope_kernel_nftables_capable: {
    help: "1 when the kernel is 5.13 or newer (nftables mode can start)",
    labels: [],
  },
  proxyscope_ipvs_virtual_servers: { help: "IPVS virtual servers in /proc/net/ip_vs", labels: [] },
  proxyscope_ipvs_real_servers: { help: "IPVS real servers in /proc/net/ip_vs", labels: [] },
  // The bounded part of node_exporter's ipvs collector, under the same names: traffic draining out of IPVS.
  proxyscope_ipvs_connections_total: {
    help: "IPVS connections since IPVS was loaded in the host network namespace (/proc/net/ip_vs_stats)",
    labels: [],
    type: "counter",
  },
  proxyscope_ipvs_incoming_packets_total: {
    help: "Packets IPVS received from clients (/proc/net/ip_vs_stats)",
    labels: [],
    type: "counter",
  },
  proxyscope_ipvs_outgoing_packets_total: {
    help: "Packets IPVS sent back to clients (/proc/net/ip_vs_stats)",
    labels: [],
    type: "counter",
  },
  proxyscope_ipvs_incoming_bytes_total: {
    help: "Bytes IPVS received from clients (/proc/net/ip_vs_stats)",
    labels: [],
    type: "counter",
  },
  proxyscope_ipvs_outgoing_bytes_total: {
    help: "Bytes IPVS sent back to clients (/proc/net/ip_vs_stats)",
    labels: [],
    type: "counter",
  },
  // One node-level number: which Services carry them is in the report's evidence, never a label.
  proxyscope_ipvs_kube_proxy_established_connections: {
    help: "Established connections through kube-proxy's IPVS virtual servers (/proc/net/ip_vs_conn): what the switch to nftables mode would cut; absent when not read",
    labels: [],
  },
  proxyscope_kube_ipvs0_present: { help: "1 when the kube-ipvs0 dummy link exists", labels: [] },
  proxyscope_kube_ipvs0_addresses: { help: "Addresses bound to kube-ipvs0", labels: [] },
  proxyscope_black_holed_addresses: {
    help: "Addresses on kube-ipvs0 with no IPVS virtual server behind them (traffic to them is dropped)",
    labels: [],
  },
  proxyscope_kube_proxy_ipsets: {
    help: "kube-proxy's ipvs-mode ipsets by their exact names (KUBE-6-* included; other KUBE-* sets, such as kube-router's, not)",
    labels: [],
  },
  proxyscope_kube_proxy_iptables_chains: {
    help: "kube-proxy's own iptables chains by their exact names, per-Service ones included; kubelet's and kube-router's excluded",
    labels: ["backend", "family"],
  },
  proxyscope_nftables_kube_proxy_table_present: {
    help: "1 when kube-proxy's nftables table exists in this family",
    labels: ["family"],
  },
  proxyscope_parity_state: {
    help: "The per-Service parity check: 1 for its current state (off, not-applicable, recorded, not-recorded, no-snapshot, corrupt, stale, compared)",
    labels: ["state"],
  },
  proxyscope_parity_services: {
    help: "Service entries by parity status against the IPVS snapshot (same, missing_after, endpoints_differ, new_after, arp_only: still served, but reached off the node only by the ARP answer kube-ipvs0 gave); absent unless compared",
    labels: ["status"],
  },
  proxyscope_parity_snapshot_timestamp_seconds: {
    help: "When the IPVS snapshot used for parity was taken (seconds since the epoch); absent without one",
    labels: [],
  },
  proxyscope_node_info: {
    help: "Always 1: what runs on this node (kernel, OS, kube-proxy, host nft), for grouping a fleet; unread when the probe failed, none when it read nothing",
    // Only what the switch does not change: a label that changes at the switch breaks every join and
    // graph over the series there. The phase has its own gauge, proxyscope_node_phase.
    labels: ["kernel_release", "os_id", "os_version", "kube_proxy_version", "nft_version"],
  },
  // A timestamp, not an age: an age computed at scan time is stale by up to one scan interval.
  proxyscope_kube_proxy_last_sync_timestamp_seconds: {
    help: "When kube-proxy last synced its rules successfully, as kube-proxy reports it (seconds since the epoch)",
    labels: [],
  },
  // kube-proxy's own counters, re-exported as counters: rate() and increase() handle its restarts.
  proxyscope_kube_proxy_sync_failures_total: {
    help: "kube-proxy's rule sync failure counters for the mode it runs, summed, as last read from kube-proxy",
    labels: [],
    type: "counter",
  },
  proxyscope_kube_proxy_cleanup_failures_total: {
    help: "kube-proxy's nftables cleanup failure counter, as last read from kube-proxy",
    labels: [],
    type: "counter",
  },
  proxyscope_finding: { help: "1 per active finding", labels: ["id", "severity"] },
  // Every id on every node, so absent() and == 0 mean something: a finding that cleared reads 0.
  proxyscope_finding_active: {
    help: "1 when the finding is active on this node, 0 when its checks ran on everything they read and it is not; absent when something it reads was not read",
    labels: ["id"],
  },
  proxyscope_findings: {
    help: "Active findings by severity (deprecated: count by (severity) (proxyscope_finding))",
    labels: ["severity"],
  },
  proxyscope_probe_success: {
    help: "1 when the probe succeeded in the last scan, 0 when it failed",
    labels: ["probe"],
  },
  proxyscope_probe_duration_seconds: { help: "How long the probe took in the last scan", labels: ["probe"] },
  proxyscope_last_scan_timestamp_seconds: {
    help: "When the last scan finished (seconds since the epoch)",
    labels: [],
  },
  proxyscope_last_scan_duration_seconds: { help: "How long the last scan took", labels: [] },
  // One series per source a scan may reuse (facts/freshness.ts SOURCE_NAMES): bounded.
  proxyscope_source_age_seconds: {
    help: "Age, at the end of the last scan, of the data it reported for a source it may reuse: nf_tables sources while the nf_tables generation is unchanged, ipvs-mode sources while kube-proxy's sync state and the cheap fingerprints are, ipvs-connections within --ipvs-conn-interval-s (0 to a few seconds: read in that scan)",
    labels: ["source"],
  },
} as const satisfies Partial<
  Record<MetricName, { help: string; labels: readonly string[]; type?: "counter" }>
>;

export type NodeMetricName = keyof typeof NODE_METRICS;

/** null: the probe that feeds the gauge failed or did not run, or the reading does not apply; the gauge is then absent, never 0. */
export type NodeMetricValues = Record<NodeMetricName, Series[] | null>;

const one = (value: number): Series[] => [{ labels: {}, value }];
const bool = (b: boolean) => (b ? 1 : 0);

export function nodeMetricValues(r: NodeReport): NodeMetricValues {
  const f = r.facts;
  const scanEnd = Date.parse(r.scannedAt) / 1000;
  const v = viewOfReport(r);
  const summary = summaryOf(r, v);
  const maybe = (n: number | null): Series[] | null => (n === null ? null : one(n));

  const bySeverity = new Map<string, number>(SEVERITIES.map((s) => [s, 0]));
  for (const x of r.findings) bySeverity.set(x.severity, (bySeverity.get(x.severity) ?? 0) + 1);
  const findingKeys = new Map(r.findings.map((x) => [`${x.id}\u0000${x.severity}`, x]));

  return {
    proxyscope_node_phase: Phase.options.map((p) => ({ labels: { phase: p }, value: bool(p === r.phase) })),
    proxyscope_node_verdict: Verdict.options.map((v) => ({
      labels: { verdict: v },
      value: bool(v === r.verdict),
    })),
    proxyscope_node_phase_inferred: one(bool(summary.phaseInferred ?? v.inferred)),
    proxyscope_kernel_nftables_capable:
      summary.kernelNftablesCapable === null ? null : one(bool(summary.kernelNftablesCapable)),
    proxyscope_ipvs_virtual_servers: f.ipvs ? one(f.ipvs.virtualServerCount) : null,
    proxyscope_ipvs_real_servers: f.ipvs ? one(f.ipvs.realServerCount) : null,
    proxyscope_ipvs_connections_total: maybe(f.ipvs?.stats?.connections ?? null),
    proxyscope_ipvs_incoming_packets_total: maybe(f.ipvs?.stats?.incomingPackets ?? null),
    proxyscope_ipvs_outgoing_packets_total: maybe(f.ipvs?.stats?.outgoingPackets ?? null),
    proxyscope_ipvs_incoming_bytes_total: maybe(f.ipvs?.stats?.incomingBytes ?? null),
    proxyscope_ipvs_outgoing_bytes_total: maybe(f.ipvs?.stats?.outgoingBytes ?? null),
    proxyscope_ipvs_kube_proxy_established_connections: maybe(summary.ipvsConnections?.established ?? null),
    proxyscope_kube_ipvs0_present: f.kubeIpvs0 ? one(bool(f.kubeIpvs0.present)) : null,
    proxyscope_kube_ipvs0_addresses: f.kubeIpvs0
      ? one(r.truncated["facts.kubeIpvs0.addresses"] ?? f.kubeIpvs0.addresses.length)
      : null,
    // Comparing kube-ipvs0 with the IPVS table: without both readings it proves nothing.
    proxyscope_black_holed_addresses: maybe(summary.blackHoledAddresses),
    proxyscope_kube_proxy_ipsets: v.kubeProxyIpsets ? one(v.kubeProxyIpsets.length) : null,
    proxyscope_kube_proxy_iptables_chains: v.kubeProxyChains
      ? v.kubeProxyChains.flatMap((b) =>
          // Unread: no sample rather than a 0, and proxyscope_probe_success says why.
          b.read
            ? [{ labels: { backend: b.backend, family: b.family }, value: b.chains.length + b.perService }]
            : [],
        )
      : null,
    proxyscope_nftables_kube_proxy_table_present: f.nftables
      ? KUBE_PROXY_TABLE_FAMILIES.map((family) => ({
          labels: { family },
          value: bool(f.nftables!.kubeProxy.some((t) => t.family === family)),
        }))
      : null,
    proxyscope_parity_state: f.parity
      ? ParityFacts.options
          .map((o) => o.shape.state.value)
          .map((s) => ({ labels: { state: s }, value: bool(s === f.parity!.state) }))
      : null,
    proxyscope_parity_services:
      f.parity?.state === "compared"
        ? [
            { labels: { status: "same" }, value: f.parity.counts.same },
            { labels: { status: "missing_after" }, value: f.parity.counts.missingAfter },
            { labels: { status: "endpoints_differ" }, value: f.parity.counts.endpointsDiffer },
            { labels: { status: "new_after" }, value: f.parity.counts.newAfter },
            // Absent from an older agent's facts: not counted, so no series rather than a 0.
            ...(f.parity.counts.arpOnly === undefined
              ? []
              : [{ labels: { status: "arp_only" }, value: f.parity.counts.arpOnly }]),
          ]
        : null,
    proxyscope_parity_snapshot_timestamp_seconds:
      f.parity && "takenAt" in f.parity ? one(f.parity.takenAt) : null,
    proxyscope_node_info: [{ labels: nodeInfo(r), value: 1 }],
    proxyscope_kube_proxy_last_sync_timestamp_seconds: maybe(v.lastSync),
    proxyscope_kube_proxy_sync_failures_total: maybe(v.syncFailures),
    proxyscope_kube_proxy_cleanup_failures_total: maybe(v.cleanupFailures),
    proxyscope_finding: [...findingKeys.values()].map((x) => ({
      labels: { id: x.id, severity: x.severity },
      value: 1,
    })),
    proxyscope_finding_active: FINDING_IDS.flatMap((id) => {
      if (r.findings.some((x) => x.id === id)) return [{ labels: { id }, value: 1 }];
      // Unread is never absent: a check that could not read its inputs says neither 0 nor 1.
      const unread = (FINDING_NEEDS.get(id) ?? []).some((k) => f[k] === null);
      return unread ? [] : [{ labels: { id }, value: 0 }];
    }),
    proxyscope_findings: [...bySeverity].map(([severity, n]) => ({ labels: { severity }, value: n })),
    proxyscope_probe_success: r.probes.map((p) => ({ labels: { probe: p.name }, value: bool(p.ok) })),
    proxyscope_probe_duration_seconds: r.probes.map((p) => ({
      labels: { probe: p.name },
      value: Math.round(p.durationMs * 10) / 10_000,
    })),
    proxyscope_last_scan_timestamp_seconds: one(scanEnd),
    proxyscope_last_scan_duration_seconds: one(r.scanDurationMs / 1000),
    proxyscope_source_age_seconds: r.sources
      ? r.sources.map((s) => ({ labels: { source: s.source }, value: s.ageSeconds }))
      : null,
  };
}

/** A label value from the node: bounded, "unread" when its probe failed, "none" when it read nothing. */
function infoValue(read: boolean, value: string | null | undefined): string {
  if (!read) return "unread";
  if (value === null || value === undefined || value === "") return "none";
  return value.length > 64 ? `${value.slice(0, 63)}…` : value;
}

function nodeInfo(r: NodeReport): Labels {
  const f = r.facts;
  return {
    kernel_release: infoValue(f.kernel !== null, f.kernel?.release),
    os_id: infoValue(f.osRelease !== null, f.osRelease?.id),
    os_version: infoValue(f.osRelease !== null, f.osRelease?.versionId),
    kube_proxy_version: infoValue(f.kubeProxyMetrics !== null, f.kubeProxyMetrics?.gitVersion),
    nft_version: infoValue(f.nftVersion !== null, f.nftVersion?.version),
  };
}
