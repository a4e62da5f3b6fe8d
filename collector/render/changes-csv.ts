import type { ServiceChanges } from "../plan/changes/schema.js";
import { csvCell } from "./csv.js";

// One row per Service and change: a platform team filters it by namespace and mails each owner theirs.
const CHANGES_CSV_COLUMNS = [
  "service",
  "row",
  "change",
  "known",
  "where",
  "not_known",
  "detail",
  "why",
  "finding_page",
  "todo",
] as const;

export function renderChangesCsv(c: ServiceChanges): string {
  const rows = c.lines.map((l) => [
    l.service,
    l.row,
    l.change,
    l.known ? "yes" : "not known",
    l.where,
    l.notKnown.join("; "),
    l.detail.join("; "),
    l.why,
    l.findingPage,
    l.todo,
  ]);
  // A Service list not read is a row too: a spreadsheet of no Service would read as "nothing changes".
  for (const n of c.notKnown) rows.push(["", "", n, "not known", "", "", "", "", "", ""]);
  const lines = [CHANGES_CSV_COLUMNS.join(","), ...rows.map((r) => r.map(csvCell).join(","))];
  return `${lines.join("\r\n")}\r\n`;
}
