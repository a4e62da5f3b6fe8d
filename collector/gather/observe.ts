import {
  FINDING_IDS,
  FLEET_DIGEST_VERSION,
  FleetDigest,
  fleetDigestOf,
  NodeReport,
  SCHEMA_VERSION,
} from "../../agent/contract.js";
import { parseBoundedJson } from "../../common/bounded-json.js";
import { ANSWER_JSON_BOUNDS, TOO_LARGE } from "./answer-bounds.js";
import type { NodeObservation } from "../report/schema.js";
import { redactUrls } from "../../common/redact.js";

/** A node with no usable report: every fact unknown, never zero. */
const EMPTY_OBSERVATION = {
  phase: null,
  phaseInferred: null,
  verdict: null,
  findings: [],
  agentVersion: null,
  scannedAt: null,
  kernel: null,
  kernelNftables: null,
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
  // A URL-only target is labelled by its URL; a URL (the kubeconfig server's, for the pod proxy) shows
  // no password in the report.
  return {
    node: redactUrls(node),
    outcome,
    reason: redactUrls(reason),
    endpoint: endpoint === null ? null : redactUrls(endpoint),
    ...EMPTY_OBSERVATION,
  };
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
  // One reading of a report, whichever route it came by: an older agent's /report is digested here
  // exactly as a current agent digests it for /report/fleet.
  return observationFromDigest(fleetDigestOf(r), endpoint, node, unknown);
}

export function observationFromDigest(
  d: FleetDigest,
  endpoint: string | null,
  node = d.node,
  unknown: readonly string[] = [],
): NodeObservation {
  const newer = [...unknown, ...unknownFindings(d.findings.map((f) => f.id))];
  return {
    node,
    outcome: "ok",
    reason: node !== d.node ? `agent calls itself ${JSON.stringify(d.node)}` : null,
    endpoint: endpoint === null ? null : redactUrls(endpoint),
    phase: d.phase,
    phaseInferred: d.phaseInferred,
    verdict: d.verdict,
    findings: d.findings,
    agentVersion: d.agentVersion,
    scannedAt: d.scannedAt,
    kernel: d.kernelRelease,
    ...(d.osPrettyName != null ? { osPrettyName: d.osPrettyName } : {}),
    kernelNftables:
      d.kernelNftablesCapable === null ? null : { capable: d.kernelNftablesCapable, from: "agent" },
    failedProbes: d.failedProbes,
    ipvsVirtualServers: d.ipvsVirtualServers,
    kubeIpvs0Addresses: d.kubeIpvs0Addresses,
    blackHoledAddresses: d.blackHoledAddresses,
    parity: d.parity,
    ...(newer.length > 0 ? { unknownToCollector: newer } : {}),
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
  // The scan cache's sources: the collector reads none of it, and their names changed once already.
  if (path[0] === "sources") return "sources";
  return null;
}

type Refusal = { ok: false; outcome: "garbage" | "schema-mismatch"; reason: string };

/** A body as JSON, refused when it is not JSON or names another version of the document than `want`. */
function versioned(body: string, what: string, want: string): { ok: true; doc: unknown } | Refusal {
  // Counted before it is parsed: a few MB of small objects is a heap of hundreds of MB once built.
  const read = parseBoundedJson(body, ANSWER_JSON_BOUNDS);
  if (!read.ok)
    return {
      ok: false,
      outcome: "garbage",
      reason: read.kind === "not-json" ? read.message : `${TOO_LARGE}: ${read.message}`,
    };
  const doc = read.doc;
  const version = (doc as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (typeof doc === "object" && doc !== null && version !== undefined && version !== want)
    return {
      ok: false,
      outcome: "schema-mismatch",
      reason: `${what} schemaVersion ${excerpt(JSON.stringify(version))}; this collector reads ${want} (upgrade the collector or the agent so they match)`,
    };
  return { ok: true, doc };
}

/** Garbage, naming the first place the document is off. */
function refused(what: string, issues: readonly { path: PropertyKey[]; message: string }[]): Refusal {
  const issue = issues[0];
  return {
    ok: false,
    outcome: "garbage",
    reason: `not a ${what}: ${issue ? `${excerpt(issue.path.map(String).join(".") || "(root)")}: ${excerpt(issue.message)}` : "invalid"}`,
  };
}

/** An agent's /report body, judged: not JSON, another schema version, or not a NodeReport. */
export function parseNodeReport(body: string): ParsedReport {
  const read = versioned(body, "NodeReport", SCHEMA_VERSION);
  if (!read.ok) return read;
  const doc = read.doc;
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
        if (p === "view" || p === "sources") continue;
        delete (facts as Record<string, unknown>)[p.slice("facts.".length)];
      }
      const { view, sources, ...rest } = d as typeof d & { sources?: unknown };
      parsed = NodeReport.safeParse({
        ...rest,
        facts,
        ...(unknown.includes("view") ? {} : { view }),
        ...(unknown.includes("sources") ? {} : { sources }),
      });
    }
  }
  if (!parsed.success) return refused("NodeReport", parsed.error.issues);
  return { ok: true, report: parsed.data, unknown: unknown.sort() };
}

export type ParsedDigest =
  | { ok: true; digest: FleetDigest; unknown: string[] }
  | { ok: false; outcome: "garbage" | "schema-mismatch"; reason: string };

/**
 * An agent's /report/fleet body, judged whole as parseNodeReport judges a report: not JSON, another
 * version, or not a FleetDigest is refused. Its parity is open as facts.parity is (docs/compatibility.md):
 * a shape this collector does not know reads as not read, named as the report's fact is.
 */
export function parseFleetDigest(body: string): ParsedDigest {
  const read = versioned(body, "FleetDigest", FLEET_DIGEST_VERSION);
  if (!read.ok) return read;
  const doc = read.doc;
  let parsed = FleetDigest.safeParse(doc);
  const unknown: string[] = [];
  if (
    !parsed.success &&
    typeof doc === "object" &&
    doc !== null &&
    !Array.isArray(doc) &&
    parsed.error.issues.every((i) => i.path[0] === "parity")
  ) {
    unknown.push("facts.parity");
    parsed = FleetDigest.safeParse({ ...doc, parity: null });
  }
  if (!parsed.success) return refused("FleetDigest", parsed.error.issues);
  return { ok: true, digest: parsed.data, unknown };
}

/** Which route an answer came by: a current agent's /report/fleet, or an older agent's whole /report. */
export type AnswerRoute = "fleet" | "report";

/**
 * An answer judged into the digest the rollup reads, whichever route it came by: an older agent's
 * report is digested here by the agent's own function, so both routes give the same observation.
 */
export function judgeAnswer(route: AnswerRoute, body: string): ParsedDigest {
  if (route === "fleet") return parseFleetDigest(body);
  const r = parseNodeReport(body);
  return r.ok ? { ok: true, digest: fleetDigestOf(r.report), unknown: r.unknown } : r;
}
