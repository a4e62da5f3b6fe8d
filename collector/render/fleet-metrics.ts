import { Gauge, Registry } from "prom-client";
import { BUILD_INFO, registerBuildInfo } from "../../common/build-info.js";
import type { FleetReport } from "../report/schema.js";

/**
 * A stable fleet metric keeps its name, type and label names across releases
 * (test/unit/metrics/stable-metrics.test.ts holds it to test/fixtures/golden/metrics/fleet-stable.txt);
 * an experimental one may change in any release. docs/compatibility.md states the promise.
 */
type FleetMetricStability = "stable" | "experimental";

interface FleetMetricSpec {
  help: string;
  labels: readonly string[];
  stability: FleetMetricStability;
}

/** Every fleet gauge the collector's `serve` exports, in exposition order. */
export const FLEET_METRICS = {
  // The agent exports the same one (common/build-info.ts): the collector's version is not a fleet fact.
  [BUILD_INFO.name]: { help: BUILD_INFO.help, labels: BUILD_INFO.labels, stability: "stable" },
  proxyscope_fleet_nodes: {
    help: "Nodes by the phase kube-proxy really runs (no-report: no usable report)",
    labels: ["phase"],
    stability: "stable",
  },
  proxyscope_fleet_nodes_by_verdict: {
    help: "Nodes by migration verdict",
    labels: ["verdict"],
    stability: "stable",
  },
  proxyscope_fleet_nodes_by_outcome: {
    help: "Nodes by how gathering their report went",
    labels: ["outcome"],
    stability: "stable",
  },
  proxyscope_fleet_nodes_unreachable: {
    help: "Nodes without a usable report (unreachable, timeout, garbage, no agent...)",
    labels: [],
    stability: "stable",
  },
  proxyscope_fleet_nodes_not_listed: {
    help: "Agents that answered for a node the API does not list",
    labels: [],
    stability: "stable",
  },
  proxyscope_fleet_findings: {
    help: "Findings by severity, nodes and cluster together",
    labels: ["severity"],
    stability: "stable",
  },
  proxyscope_fleet_cluster_finding: {
    help: "1 per active cluster finding",
    labels: ["id", "severity"],
    stability: "stable",
  },
  proxyscope_fleet_plan_step: {
    help: "1 for each plan step's current status",
    labels: ["step", "id", "status"],
    stability: "stable",
  },
  proxyscope_fleet_report_partial: {
    help: "1 when some node gave no usable report",
    labels: [],
    stability: "stable",
  },
  proxyscope_fleet_last_gather_success: {
    help: "1 when the last gather produced a report",
    labels: [],
    stability: "stable",
  },
  proxyscope_fleet_last_report_timestamp_seconds: {
    help: "When the report being served was made",
    labels: [],
    stability: "stable",
  },
  proxyscope_fleet_last_gather_duration_seconds: {
    help: "How long the last gather took",
    labels: [],
    stability: "stable",
  },
} as const satisfies Record<string, FleetMetricSpec>;

type FleetMetricName = keyof typeof FLEET_METRICS;

/** The fleet gauges, on a registry of their own (nothing global, nothing from other libraries). */
export function fleetMetrics() {
  const registry = new Registry();
  const g = (name: FleetMetricName) =>
    new Gauge({
      name,
      help: FLEET_METRICS[name].help,
      labelNames: [...FLEET_METRICS[name].labels],
      registers: [registry],
    });
  registerBuildInfo(registry);
  const m = {
    nodes: g("proxyscope_fleet_nodes"),
    byVerdict: g("proxyscope_fleet_nodes_by_verdict"),
    byOutcome: g("proxyscope_fleet_nodes_by_outcome"),
    unreachable: g("proxyscope_fleet_nodes_unreachable"),
    notListed: g("proxyscope_fleet_nodes_not_listed"),
    findings: g("proxyscope_fleet_findings"),
    clusterFinding: g("proxyscope_fleet_cluster_finding"),
    plan: g("proxyscope_fleet_plan_step"),
    partial: g("proxyscope_fleet_report_partial"),
    lastSuccess: g("proxyscope_fleet_last_gather_success"),
    lastTimestamp: g("proxyscope_fleet_last_report_timestamp_seconds"),
    duration: g("proxyscope_fleet_last_gather_duration_seconds"),
  };

  function update(r: FleetReport, durationS: number) {
    for (const x of [m.nodes, m.byVerdict, m.byOutcome, m.findings, m.clusterFinding, m.plan]) x.reset();
    for (const [k, v] of Object.entries(r.summary.byPhase)) m.nodes.set({ phase: k }, v);
    for (const [k, v] of Object.entries(r.summary.byVerdict)) m.byVerdict.set({ verdict: k }, v);
    for (const [k, v] of Object.entries(r.summary.byOutcome)) m.byOutcome.set({ outcome: k }, v);
    for (const [k, v] of Object.entries(r.summary.bySeverity)) m.findings.set({ severity: k }, v);
    for (const f of r.clusterFindings) m.clusterFinding.set({ id: f.id, severity: f.severity }, 1);
    for (const p of r.plan) m.plan.set({ step: String(p.step), id: p.id, status: p.status }, 1);
    m.unreachable.set(r.summary.unanswered);
    m.notListed.set(r.summary.notListedByApi);
    m.partial.set(r.partial ? 1 : 0);
    m.lastSuccess.set(1);
    m.lastTimestamp.set(Date.parse(r.generatedAt) / 1000);
    m.duration.set(durationS);
  }
  function failed(durationS: number) {
    m.lastSuccess.set(0);
    m.duration.set(durationS);
  }
  return { registry, update, failed };
}
