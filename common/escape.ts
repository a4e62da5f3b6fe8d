// Names, addresses and rule text come from the node; none of it may steer a terminal.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function terminalSafe(s: string): string {
  return s.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** True when the text holds a character terminalSafe would escape (C0, DEL, C1, line and bidi controls). */
export function hasControl(s: string): boolean {
  return new RegExp(CONTROL.source).test(s);
}

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
 * breaks would end the row; a URL, a `www.` name or an address with "@" would become a link.
 */
export function md(s: string | number | boolean | null | undefined): string {
  return terminalSafe(String(s ?? "").replace(/[\r\n]+/g, " "))
    .split(/(\s+)/)
    .map((word, i) => (i % 2 === 1 ? word : mdWord(word)))
    .join("");
}

function mdWord(word: string): string {
  if (!AUTOLINKABLE.test(word)) return mdText(word);
  // A GFM table splits a row at "|" even inside code: pipes stay escaped text between the code spans.
  return word
    .split("|")
    .map((part) => (part === "" ? "" : AUTOLINKABLE.test(part) ? mdCode(part) : mdText(part)))
    .join("\\|");
}

function mdText(s: string): string {
  // Markdown's own characters first, then only the three that start HTML: escaping ' as &#39; and then
  // its # for Markdown printed "kube-proxy&\#39;s".
  return s.replace(/([\\`|*_[\]#])/g, "\\$1").replace(/[&<>]/g, (c) => HTML[c]!);
}

// GFM's autolink literals (github.github.com/gfm, "Autolinks (extension)"): http:// and https:// (ftp://
// in cmark-gfm too), www., and e-mail addresses (also after mailto: and xmpp:). GitHub finds them twice,
// once while parsing and once more in the text after escapes are decoded
// (micromark-extension-gfm-autolink-literal's README), so a backslash cannot stop them; a code span
// can, everywhere. A word that holds any of their triggers is shown as code.
const AUTOLINKABLE = /:\/\/|www\.|@/i;

/** A word (no "|") as a code span: as typed, nothing inside is markup or a link. */
function mdCode(body: string): string {
  // The fence is longer than any run of backticks inside; a space pads a backtick at either end
  // (CommonMark strips one from each side).
  const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((r) => r.length));
  const fence = "`".repeat(longest + 1);
  const pad = body.startsWith("`") || body.endsWith("`") ? " " : "";
  return `${fence}${pad}${body}${pad}${fence}`;
}
