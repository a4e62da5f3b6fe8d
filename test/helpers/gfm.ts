// What a GFM renderer would read in a line of our Markdown, for tests: no Markdown library is a
// dependency, so this follows the spec's rules the renderers share (github.github.com/gfm):
// code spans (a run of N backticks up to the next run of exactly N), backslash escapes of ASCII
// punctuation, and the autolink literals (extension): www., http(s):// (ftp:// in cmark-gfm), e-mail.

/** The line's code spans' contents, and its other text with escapes and entities decoded. */
export function splitCodeSpans(line: string): { code: string[]; text: string } {
  const code: string[] = [];
  let text = "";
  let i = 0;
  while (i < line.length) {
    if (line[i] === "\\" && i + 1 < line.length && /[!-/:-@[-`{-~]/.test(line[i + 1]!)) {
      text += line.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (line[i] !== "`") {
      text += line[i];
      i++;
      continue;
    }
    const run = /^`+/.exec(line.slice(i))![0];
    let j = i + run.length;
    let close = -1;
    while (j < line.length) {
      const m = /`+/.exec(line.slice(j));
      if (!m) break;
      if (m[0].length === run.length) {
        close = j + m.index;
        break;
      }
      j += m.index + m[0].length;
    }
    if (close === -1) {
      text += run;
      i += run.length;
      continue;
    }
    let body = line.slice(i + run.length, close);
    if (body.startsWith(" ") && body.endsWith(" ") && body.trim() !== "") body = body.slice(1, -1);
    code.push(body);
    text += " ";
    i = close + run.length;
  }
  const decoded = text
    .replace(/\\([!-/:-@[-`{-~])/g, "$1")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
  return { code, text: decoded };
}

// Wider than the spec's recognisers (no "valid domain" or "preceded by" rules): a test that finds none
// of these finds none of the real ones.
const AUTOLINK = [/www\./i, /(?:https?|ftp):\/\//i, /[A-Za-z0-9._+-]@[A-Za-z0-9_-]+\.[A-Za-z0-9_-]/];

/** The first autolink literal a GFM renderer could make of this text, or null. */
export function autolinkIn(text: string): string | null {
  for (const re of AUTOLINK) {
    const m = re.exec(text);
    if (m) return text.slice(Math.max(0, m.index - 20), m.index + 40);
  }
  return null;
}
