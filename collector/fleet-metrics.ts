import { Gauge, Registry } from "prom-client";
import type { FleetReport } from "./report/schema.js";

/** The fleet gauges, on a registry of their own (nothing global, nothing from other libraries). */
export function fleetMetrics() {
  const registry = new Registry();
  const g = (name: string, help: string, labelNames: string[] = []) =>
    new Gauge({ name, help, labelNames, registers: [registry] });
  const m = {
    nodes: g(
      "proxyscope_fleet_nodes",
      "Nodes by the phase kube-proxy really runs (no-report: no usable report)",
      ["phase"],
    ),
    byVerdict: g("proxyscope_fleet_nodes_by_verdict", "Nodes by migration verdict", ["verdict"]),
    byOutcome: g("proxyscope_fleet_nodes_by_outcome", "Nodes by how gathering their report went", [
      "outcome",
    ]),
    unreachable: g(
      "proxyscope_fleet_nodes_unreachable",
      "Nodes without a usable report (unreachable, timeout, garbage, no agent...)",
    ),
    notListed: g(
      "proxyscope_fleet_nodes_not_listed",
      "Agents that answered for a node the API does not list",
    ),
    findings: g("proxyscope_fleet_findings", "Findings by severity, nodes and cluster together", [
      "severity",
    ]),
    clusterFinding: g("proxyscope_fleet_cluster_finding", "1 per active cluster finding", ["id", "severity"]),
    plan: g("proxyscope_fleet_plan_step", "1 for each plan step's current status", ["step", "id", "status"]),
    partial: g("proxyscope_fleet_report_partial", "1 when some node gave no usable report"),
    lastSuccess: g("proxyscope_fleet_last_gather_success", "1 when the last gather produced a report"),
    lastTimestamp: g(
      "proxyscope_fleet_last_report_timestamp_seconds",
      "When the report being served was made",
    ),
    duration: g("proxyscope_fleet_last_gather_duration_seconds", "How long the last gather took"),
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
