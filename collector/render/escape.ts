import { terminalSafe } from "../../agent/render/escape.js";

export { terminalSafe };

const HTML: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** For text and attribute values alike: everything a node or the API supplies goes through here. */
export function html(s: string | number | boolean | null | undefined): string {
  return String(s ?? "").replace(/[&<>"']/g, (c) => HTML[c]!);
}

/**
 * JSON for a `<script type="application/json">` block: `<` never appears raw, so neither `</script>`
 * nor `<!--` can end or change the block; U+2028/2029 are escaped for older parsers.
 */
export function jsonForScript(v: unknown): string {
  return JSON.stringify(v)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/**
 * A Markdown table cell: pipes, backticks and HTML would change the table or inject markup; line
 * breaks would end the row.
 */
export function md(s: string | number | boolean | null | undefined): string {
  return terminalSafe(String(s ?? "").replace(/[\r\n]+/g, " "))
    .replace(/[&<>"']/g, (c) => HTML[c]!)
    .replace(/([\\`|*_[\]#])/g, "\\$1");
}
