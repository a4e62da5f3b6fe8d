import { z } from "zod";
import { Finding, NodeReport, ProbeStatus } from "../report/schema.js";

/**
 * The public part of a node report: where the node stands and which findings it has, without the
 * evidence (addresses, rule text, kube-proxy's configuration, Service backends) that the full /report
 * carries. The same facts /metrics already exposes as series.
 */
export const ReportSummary = NodeReport.pick({
  schemaVersion: true,
  agentVersion: true,
  node: true,
  scannedAt: true,
  phase: true,
  phaseSource: true,
  verdict: true,
}).extend({
  findings: z.array(Finding.pick({ id: true, severity: true })),
  probes: z.array(ProbeStatus.pick({ name: true, ok: true })),
});
export type ReportSummary = z.infer<typeof ReportSummary>;

export function reportSummary(r: NodeReport): ReportSummary {
  return {
    schemaVersion: r.schemaVersion,
    agentVersion: r.agentVersion,
    node: r.node,
    scannedAt: r.scannedAt,
    phase: r.phase,
    phaseSource: r.phaseSource,
    verdict: r.verdict,
    findings: r.findings.map((f) => ({ id: f.id, severity: f.severity })),
    probes: r.probes.map((p) => ({ name: p.name, ok: p.ok })),
  };
}
