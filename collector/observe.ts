import { FINDING_IDS, NodeReport, SCHEMA_VERSION, summaryOf } from "../agent/contract.js";
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

const KNOWN_FINDINGS: ReadonlySet<string> = new Set(FINDING_IDS);

/** What a newer agent sent that this collector does not know, as the node's note names it. */
export function unknownFindings(ids: readonly string[]): string[] {
  return [...new Set(ids.filter((id) => !KNOWN_FINDINGS.has(id)))].map((id) => `finding ${id}`);
}

export function observationFromReport(
  r: NodeReport,
  endpoint: string | null,
  node = r.node,
  unknown: readonly string[] = [],
): NodeObservation {
  const view = summaryOf(r);
  const newer = [...unknown, ...unknownFindings(r.findings.map((f) => f.id))];
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
    ...(newer.length > 0 ? { unknownToCollector: newer } : {}),
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
  | { ok: true; report: NodeReport; unknown: string[] }
  | { ok: false; outcome: "garbage" | "schema-mismatch"; reason: string };

/**
 * The parts of a report a newer agent may reshape without a version bump (docs/compatibility.md): one
 * fact ("facts.parity"), or the view summary, which summaryOf rebuilds. Anything else is the contract.
 */
function openPart(path: readonly PropertyKey[]): string | null {
  if (path[0] === "facts" && typeof path[1] === "string") return `facts.${path[1]}`;
  if (path[0] === "view") return "view";
  return null;
}

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
  let parsed = NodeReport.safeParse(doc);
  const unknown: string[] = [];
  // A fact of a shape this collector does not know (a newer agent's new parity state) is read as not
  // read, named, and the node kept: dropping a node over one fact would hide the rest of it.
  if (!parsed.success && typeof doc === "object" && doc !== null && !Array.isArray(doc)) {
    const parts = parsed.error.issues.map((i) => openPart(i.path));
    if (parts.every((p) => p !== null)) {
      const d = doc as { facts?: unknown; view?: unknown };
      const facts = typeof d.facts === "object" && d.facts !== null ? { ...(d.facts as object) } : d.facts;
      for (const p of new Set(parts)) {
        unknown.push(p);
        if (p === "view") continue;
        delete (facts as Record<string, unknown>)[p.slice("facts.".length)];
      }
      const { view, ...rest } = d;
      parsed = NodeReport.safeParse(unknown.includes("view") ? { ...rest, facts } : { ...rest, view, facts });
    }
  }
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      outcome: "garbage",
      reason: `not a NodeReport: ${issue ? `${excerpt(issue.path.join(".") || "(root)")}: ${excerpt(issue.message)}` : "invalid"}`,
    };
  }
  return { ok: true, report: parsed.data, unknown: unknown.sort() };
}
