import type { MetricName } from "./names.js";
import { Phase, SEVERITIES, Verdict, type NodeReport } from "../report/schema.js";
import { summaryOf, viewOfReport } from "../view/summary.js";

export type Labels = Record<string, string>;
export interface Series {
  labels: Labels;
  value: number;
}

/**
 * Every gauge derived from a NodeReport. Labels are bounded by design: probe names, finding ids,
 * enum values and netfilter families only, never an address or a Service name.
 */
export const NODE_GAUGES = {
  proxyscope_node_phase: {
    help: "What kube-proxy really runs on this node: 1 for the current phase",
    labels: ["phase"],
  },
  proxyscope_node_verdict: {
    help: "The node's migration verdict: 1 for the current verdict",
    labels: ["verdict"],
  },
  proxyscope_kernel_nftables_capable: {
    help: "1 when the kernel is 5.13 or newer (nftables mode can start)",
    labels: [],
  },
  proxyscope_ipvs_virtual_servers: { help: "IPVS virtual servers in /proc/net/ip_vs", labels: [] },
  proxyscope_ipvs_real_servers: { help: "IPVS real servers in /proc/net/ip_vs", labels: [] },
  proxyscope_kube_ipvs0_present: { help: "1 when the kube-ipvs0 dummy link exists", labels: [] },
  proxyscope_kube_ipvs0_addresses: { help: "Addresses bound to kube-ipvs0", labels: [] },
  proxyscope_black_holed_addresses: {
    help: "Addresses on kube-ipvs0 with no IPVS virtual server behind them (traffic to them is dropped)",
    labels: [],
  },
  proxyscope_kube_proxy_ipsets: {
    help: "ipsets named like kube-proxy's ipvs mode (KUBE-*, KUBE-6-*)",
    labels: [],
  },
  proxyscope_kube_proxy_iptables_chains: {
    help: "kube-proxy-owned KUBE-* chains, per-Service ones included, kubelet's excluded",
    labels: ["backend", "family"],
  },
  proxyscope_nftables_kube_proxy_table_present: {
    help: "1 when kube-proxy's nftables table exists in this family",
    labels: ["family"],
  },
  proxyscope_kube_proxy_last_sync_age_seconds: {
    help: "Seconds between kube-proxy's last successful rule sync and the end of the last scan",
    labels: [],
  },
  proxyscope_kube_proxy_sync_failures: {
    help: "kube-proxy's rule sync failure counters for its mode, summed, as last read",
    labels: [],
  },
  proxyscope_kube_proxy_cleanup_failures: {
    help: "kube-proxy's nftables cleanup failure counter as last read",
    labels: [],
  },
  proxyscope_finding: { help: "1 per active finding", labels: ["id", "severity"] },
  proxyscope_findings: { help: "Active findings by severity", labels: ["severity"] },
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
} as const satisfies Partial<Record<MetricName, { help: string; labels: readonly string[] }>>;

export type NodeGaugeName = keyof typeof NODE_GAUGES;

/** null: the probe that feeds the gauge failed or did not run, or the reading does not apply; the gauge is then absent, never 0. */
export type NodeMetricValues = Record<NodeGaugeName, Series[] | null>;

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
    proxyscope_kernel_nftables_capable:
      summary.kernelNftablesCapable === null ? null : one(bool(summary.kernelNftablesCapable)),
    proxyscope_ipvs_virtual_servers: f.ipvs ? one(f.ipvs.virtualServerCount) : null,
    proxyscope_ipvs_real_servers: f.ipvs ? one(f.ipvs.realServerCount) : null,
    proxyscope_kube_ipvs0_present: f.kubeIpvs0 ? one(bool(f.kubeIpvs0.present)) : null,
    proxyscope_kube_ipvs0_addresses: f.kubeIpvs0
      ? one(r.truncated["facts.kubeIpvs0.addresses"] ?? f.kubeIpvs0.addresses.length)
      : null,
    // Comparing kube-ipvs0 with the IPVS table: without both readings it proves nothing.
    proxyscope_black_holed_addresses: maybe(summary.blackHoledAddresses),
    proxyscope_kube_proxy_ipsets: v.kubeProxyIpsets ? one(v.kubeProxyIpsets.length) : null,
    proxyscope_kube_proxy_iptables_chains: v.kubeProxyChains
      ? v.kubeProxyChains
          .filter((b) => b.available)
          .map((b) => ({
            labels: { backend: b.backend, family: b.family },
            value: b.chains.length + b.perService,
          }))
      : null,
    proxyscope_nftables_kube_proxy_table_present: f.nftables
      ? (["ip", "ip6"] as const).map((family) => ({
          labels: { family },
          value: bool(f.nftables!.kubeProxy.some((t) => t.family === family)),
        }))
      : null,
    proxyscope_kube_proxy_last_sync_age_seconds:
      v.lastSync !== null ? one(Math.max(0, scanEnd - v.lastSync)) : null,
    proxyscope_kube_proxy_sync_failures: maybe(v.syncFailures),
    proxyscope_kube_proxy_cleanup_failures: maybe(v.cleanupFailures),
    proxyscope_finding: [...findingKeys.values()].map((x) => ({
      labels: { id: x.id, severity: x.severity },
      value: 1,
    })),
    proxyscope_findings: [...bySeverity].map(([severity, n]) => ({ labels: { severity }, value: n })),
    proxyscope_probe_success: r.probes.map((p) => ({ labels: { probe: p.name }, value: bool(p.ok) })),
    proxyscope_probe_duration_seconds: r.probes.map((p) => ({
      labels: { probe: p.name },
      value: Math.round(p.durationMs * 10) / 10_000,
    })),
    proxyscope_last_scan_timestamp_seconds: one(scanEnd),
    proxyscope_last_scan_duration_seconds: one(r.scanDurationMs / 1000),
  };
}
