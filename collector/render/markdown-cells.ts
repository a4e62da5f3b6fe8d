import { findingPageUrl, isFindingId } from "../../common/finding-page.js";
import { md } from "../../common/escape.js";

// The Markdown report's cells: each value from a node or the API goes through md() before it lands in one.

/** A well-formed id links to its page, the address built from the id alone; any other text stays text. */
export const page = (id: string) => (isFindingId(id) ? `[${id}](${findingPageUrl(id)})` : md(id));

/** An accepted finding keeps its row and its severity, marked with the reason it was accepted. */
export const sev = (f: { severity: string; accepted?: { reason: string } }) =>
  f.accepted ? `${f.severity} (accepted: ${md(f.accepted.reason)})` : f.severity;

export const row = (cells: (string | number)[]) => `| ${cells.map(String).join(" | ")} |`;

/** The first `n` of a list, and how many more there are. */
export const firstOf = (list: readonly string[], n: number) =>
  list.slice(0, n).join(", ") + (list.length > n ? ` +${list.length - n}` : "");
