import { terminalSafe } from "../../common/escape.js";
import type { FleetNode, FleetReport } from "../report/schema.js";
import { SCOPE_LABEL } from "../report/scope.js";
import { nodeNote, phaseOf, verdictOf } from "./labels.js";

// One row per node, the columns of the HTML report's pool tables: `-o csv` prints exactly what the page's
// "CSV" button downloads (the page embeds this text), so a spreadsheet and the review agree.

export const CSV_COLUMNS = [
  "pool",
  "node",
  "phase",
  "verdict",
  "outcome",
  "kubelet",
  "kernel",
  "os_image",
  "internal_ip",
  "worst_severity",
  "blocks_migration",
  "findings",
  "note",
] as const;

const RANK = { critical: 0, error: 1, warning: 2, info: 3 } as const;

export function worstSeverity(n: FleetNode): string {
  return [...n.findings].sort((a, b) => RANK[a.severity] - RANK[b.severity])[0]?.severity ?? "";
}

/**
 * RFC 4180 quoting, and a cell a node or the API supplies never starts a spreadsheet formula: one that
 * begins with = + - @ or a tab or CR gets a leading apostrophe (OWASP's CSV-injection advice).
 */
export function csvCell(v: string | number | boolean | null | undefined): string {
  // -o csv goes to a terminal as often as to a file: no other control character reaches it raw. Line
  // breaks and tabs stay (quoted below): a spreadsheet reads them as the node wrote them.
  let s = String(v ?? "")
    .split(/(\r\n|\r|\n|\t)/)
    .map((part, i) => (i % 2 === 1 ? part : terminalSafe(part)))
    .join("");
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function csvRow(n: FleetNode): string[] {
  return [
    n.pool,
    n.node,
    phaseOf(n),
    verdictOf(n),
    n.outcome,
    n.kubeletVersion ?? "",
    n.kernel ?? "",
    n.osImage ?? "",
    n.internalIP ?? "",
    worstSeverity(n),
    n.findings.some((f) => f.blocksMigration === true) ? "yes" : "no",
    n.findings.map((f) => f.id).join(" "),
    nodeNote(n),
  ];
}

export function renderCsv(r: FleetReport): string {
  // A preflight or a demo names itself on every row (CSV has no heading but its columns); a fleet
  // report keeps exactly the columns it always had.
  // Likewise the accepted findings, with --accept-file only.
  const scope = r.scope ? [SCOPE_LABEL[r.scope.kind]] : [];
  const accepted = (n: FleetNode) =>
    r.acceptances
      ? [
          n.findings
            .filter((f) => f.accepted)
            .map((f) => f.id)
            .join(" "),
        ]
      : [];
  const head = [
    ...CSV_COLUMNS,
    ...(r.scope ? ["report_scope"] : []),
    ...(r.acceptances ? ["accepted_findings"] : []),
  ];
  const lines = [
    head.join(","),
    ...r.nodes.map((n) => [...csvRow(n), ...scope, ...accepted(n)].map(csvCell).join(",")),
  ];
  return `${lines.join("\r\n")}\r\n`;
}
