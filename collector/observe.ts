import { NodeReport, SCHEMA_VERSION, summaryOf } from "../agent/contract.js";
import type { NodeObservation } from "./report/schema.js";

/** A node with no usable report: every fact unknown, never zero. */
const EMPTY_OBSERVATION = {
  phase: null,
  phaseInferred: null,
  verdict: null,
  findings: [],
  agentVersion: null,
  scannedAt: null,
  kernelRelease: null,
  kernelNftablesCapable: null,
  failedProbes: [],
  ipvsVirtualServers: null,
  kubeIpvs0Addresses: null,
  blackHoledAddresses: null,
} satisfies Partial<NodeObservation>;

export function failedObservation(
  node: string,
  endpoint: string | null,
  outcome: Exclude<NodeObservation["outcome"], "ok">,
  reason: string,
): NodeObservation {
  return { node, outcome, reason, endpoint, ...EMPTY_OBSERVATION };
}

export function observationFromReport(
  r: NodeReport,
  endpoint: string | null,
  node = r.node,
): NodeObservation {
  const view = summaryOf(r);
  return {
    node,
    outcome: "ok",
    reason: node !== r.node ? `agent calls itself ${JSON.stringify(r.node)}` : null,
    endpoint,
    phase: r.phase,
    phaseInferred: view.phaseInferred ?? null,
    verdict: r.verdict,
    findings: r.findings,
    agentVersion: r.agentVersion,
    scannedAt: r.scannedAt,
    kernelRelease: r.facts.kernel?.release ?? null,
    kernelNftablesCapable: view.kernelNftablesCapable,
    failedProbes: r.probes.filter((p) => !p.ok).map((p) => p.name),
    ipvsVirtualServers: r.facts.ipvs?.available ? r.facts.ipvs.virtualServerCount : null,
    kubeIpvs0Addresses: r.facts.kubeIpvs0 ? r.facts.kubeIpvs0.addresses.length : null,
    blackHoledAddresses: view.blackHoledAddresses,
    parity: parityOf(r),
  };
}

function parityOf(r: NodeReport): NodeObservation["parity"] {
  const p = r.facts.parity;
  if (p === null) return null;
  return {
    state: p.state,
    snapshotAgeSeconds: "ageSeconds" in p ? p.ageSeconds : null,
    counts: p.state === "compared" ? p.counts : null,
    lost:
      p.state === "compared"
        ? p.services
            .filter((s) => s.status === "missing-after")
            .flatMap((s) => s.addresses.map((a) => `${a}/${s.protocol}`))
        : [],
    differ:
      p.state === "compared"
        ? p.services.flatMap((s) =>
            s.status === "endpoints-differ" && s.service !== null
              ? [
                  {
                    service: s.service,
                    protocol: s.protocol,
                    endpointsAfter: s.endpointsAfter,
                    after: s.after ?? null,
                    gone: s.gone,
                    added: s.added,
                  },
                ]
              : [],
          )
        : [],
  };
}

// What an agent sent is quoted, never copied whole: a 10 MB schemaVersion is not a 10 MB reason.
const excerpt = (s: string) => (s.length > 120 ? `${s.slice(0, 120)}…` : s);

export type ParsedReport =
  { ok: true; report: NodeReport } | { ok: false; outcome: "garbage" | "schema-mismatch"; reason: string };

/** An agent's /report body, judged: not JSON, another schema version, or not a NodeReport. */
export function parseNodeReport(body: string): ParsedReport {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return { ok: false, outcome: "garbage", reason: `not JSON: ${JSON.stringify(body.slice(0, 60))}` };
  }
  const version = (doc as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (typeof doc === "object" && doc !== null && version !== undefined && version !== SCHEMA_VERSION)
    return {
      ok: false,
      outcome: "schema-mismatch",
      reason: `NodeReport schemaVersion ${excerpt(JSON.stringify(version))}; this collector reads ${SCHEMA_VERSION} (upgrade the collector or the agent so they match)`,
    };
  const parsed = NodeReport.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      outcome: "garbage",
      reason: `not a NodeReport: ${issue ? `${excerpt(issue.path.join(".") || "(root)")}: ${excerpt(issue.message)}` : "invalid"}`,
    };
  }
  return { ok: true, report: parsed.data };
}
