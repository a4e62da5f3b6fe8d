import { parse as parseYaml } from "yaml";
import { z } from "zod";
import type { Acceptance, AcceptReport, FleetReport } from "./schema.js";

// `report --accept-file`: findings the team has looked at and accepted, each with a reason and maybe an
// expiry. An accepted finding stays in the report, marked, in every format; it only stops counting
// for --fail-on's severities. An entry that expired or matched nothing is reported, so a stale list
// is seen, not trusted.

const SERVICE = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?\/[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/;

const Entry = z.strictObject({
  finding: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "must be a finding id like ipvs-mode-deprecated"),
  node: z.string().min(1).optional(),
  service: z.string().regex(SERVICE, "must be NAMESPACE/NAME").optional(),
  reason: z.string().trim().min(1, "a reason is required"),
  // YAML reads an unquoted 2027-01-31 as a timestamp; either way it must be a date.
  expires: z
    .union([z.date(), z.string()])
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      const d = v instanceof Date ? v : new Date(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T23:59:59Z` : v);
      if (Number.isNaN(d.getTime())) {
        ctx.addIssue({ code: "custom", message: "must be a date like 2027-01-31 or an RFC 3339 time" });
        return z.NEVER;
      }
      return d.toISOString();
    }),
});
const AcceptFile = z.strictObject({ accept: z.array(Entry).max(10_000) });
export type AcceptEntry = z.infer<typeof Entry>;

export class AcceptFileError extends Error {}

/** The file's text to its entries, or an error naming the file, the entry and the field. */
export function parseAcceptFile(text: string, file: string): AcceptEntry[] {
  let doc: unknown;
  try {
    // YAML 1.2 reads JSON too: one parser for both (the one the web config uses).
    doc = parseYaml(text, { maxAliasCount: 10 });
  } catch (e) {
    throw new AcceptFileError(
      `--accept-file ${file}: not YAML or JSON: ${(e as Error).message.split("\n")[0]}`,
    );
  }
  const r = AcceptFile.safeParse(doc ?? null);
  if (!r.success) {
    const problems = r.error.issues.slice(0, 5).map(
      (i) =>
        `${
          i.path.length > 0
            ? `${i.path
                .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
                .join("")
                .replace(/^\./, "")}: `
            : ""
        }${i.message}`,
    );
    throw new AcceptFileError(`--accept-file ${file}: ${problems.join("; ")}`);
  }
  return r.data.accept;
}

/** The Services (namespace/name) a finding's evidence names, at the start of any string in it. */
export function servicesNamed(evidence: unknown): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown, depth: number): void => {
    if (depth > 8) return;
    if (typeof v === "string") {
      const m = /^([a-z0-9][a-z0-9-]*\/[a-z0-9][a-z0-9.-]*)(?![a-z0-9.-])/.exec(v);
      if (m && SERVICE.test(m[1]!)) out.add(m[1]!);
    } else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (typeof v === "object" && v !== null) for (const x of Object.values(v)) walk(x, depth + 1);
  };
  walk(evidence, 0);
  return out;
}

const describe = (e: AcceptEntry, i: number) =>
  `[${i}] ${e.finding}${e.node ? ` on ${e.node}` : ""}${e.service ? ` for ${e.service}` : ""}`;

/**
 * Marks the findings the entries accept. A finding is accepted by the live entries with its id whose
 * node (if any) is its node; an entry with a Service accepts it only when every Service the finding
 * names is accepted, so accepting one Service never silences another. Cluster findings match only
 * entries without a node.
 */
export function applyAcceptances(r: FleetReport, entries: readonly AcceptEntry[], file: string): FleetReport {
  const now = Date.parse(r.generatedAt);
  const live = entries.map((e, i) => ({ e, i })).filter(({ e }) => !e.expires || Date.parse(e.expires) > now);
  const used = new Set<number>();
  const accept = (id: string, node: string | null, evidence: unknown): Acceptance | undefined => {
    const mine = live.filter(({ e }) => e.finding === id && (e.node === undefined || e.node === node));
    const whole = mine.find(({ e }) => e.service === undefined);
    const named = servicesNamed(evidence);
    const bySvc = mine.filter(({ e }) => e.service !== undefined && named.has(e.service));
    const covered = named.size > 0 && [...named].every((s) => bySvc.some(({ e }) => e.service === s));
    const by = whole ? [whole] : covered ? bySvc : [];
    if (by.length === 0) return undefined;
    for (const { i } of by) used.add(i);
    const first = by[0]!.e;
    return {
      reason: by.map(({ e }) => e.reason).join("; "),
      entries: by.map(({ i }) => i),
      ...(first.expires ? { expires: first.expires } : {}),
    };
  };
  const clusterFindings = r.clusterFindings.map((f) => {
    const a = accept(f.id, null, f.evidence);
    return a ? { ...f, accepted: a } : f;
  });
  const nodes = r.nodes.map((n) => ({
    ...n,
    findings: n.findings.map((f) => {
      const a = accept(f.id, n.node, f.evidence);
      return a ? { ...f, accepted: a } : f;
    }),
  }));
  const acceptances: AcceptReport = {
    file,
    entries: entries.length,
    accepted: [...clusterFindings, ...nodes.flatMap((n) => n.findings)].filter((f) => f.accepted).length,
    expired: entries.flatMap((e, i) =>
      e.expires && Date.parse(e.expires) <= now
        ? [`${describe(e, i)}: expired ${e.expires} (${e.reason})`]
        : [],
    ),
    unmatched: live
      .filter(({ i }) => !used.has(i))
      .map(({ e, i }) => `${describe(e, i)}: matched no finding`),
  };
  return { ...r, clusterFindings, nodes, acceptances };
}

/** Lines for a text format: what was accepted, and the entries that did not apply. */
export function acceptLines(a: AcceptReport): string[] {
  return [
    `accepted by ${a.file}: ${a.accepted} finding(s), from ${a.entries} entr${a.entries === 1 ? "y" : "ies"}`,
    ...a.expired.map((l) => `  expired, not applied: ${l}`),
    ...a.unmatched.map((l) => `  unmatched: ${l}`),
  ];
}
