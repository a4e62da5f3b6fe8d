import { renderStructured } from "../../common/structured.js";
import { terminalSafe as safe } from "../../common/escape.js";
import type { CollectorConfig } from "../config.js";
import type { ServiceChanges } from "../plan/changes/schema.js";
import { renderChangesCsv } from "./changes-csv.js";
import { renderChangesHtml } from "./changes-html.js";
import { renderChangesMarkdown } from "./changes-markdown.js";

/** `report --changes` in the format asked: the fleet report's formats, each with its own escaping. */
export function renderChanges(c: ServiceChanges, output: CollectorConfig["output"]): string {
  switch (output) {
    case "json":
      return `${JSON.stringify(c, null, 2)}\n`;
    case "yaml":
      return renderStructured(c, "yaml");
    case "csv":
      return renderChangesCsv(c);
    case "markdown":
      return renderChangesMarkdown(c);
    case "html":
      return renderChangesHtml(c);
    // junit is refused with --changes at the command line (config.ts): a change list has no pass or fail.
    case "junit":
    case "table":
    case "text":
      return renderChangesText(c);
  }
}

/** For a terminal: one block per change, everything from the API or a node made terminal-safe. */
function renderChangesText(c: ServiceChanges): string {
  const out = [`${c.services} Service(s), ${c.lines.length} change line(s)`];
  for (const n of c.notKnown) out.push(safe(n));
  for (const l of c.lines) {
    out.push("", `${safe(l.service)}  row ${l.row}: ${l.change}`);
    out.push(`  where: ${safe(l.where)}`);
    if (l.known && l.notKnown.length > 0) out.push(`  not known: ${safe(l.notKnown.join("; "))}`);
    if (l.detail.length > 0) out.push(`  detail: ${safe(l.detail.join("; "))}`);
    out.push(`  why: ${l.why}`, `  ref: ${l.findingPage}`, `  do: ${l.todo}`);
  }
  return `${out.join("\n")}\n`;
}
