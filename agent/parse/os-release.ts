import type { OsReleaseFacts } from "../facts/host.js";
import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

type OsReleaseFields = Omit<OsReleaseFacts, "source">;

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;

/**
 * Parses an os-release(5) file: shell-style KEY=VALUE lines, values optionally in single or double
 * quotes, backslash escapes inside double quotes and in bare values, `#` comments.
 */
function parseOsReleaseAssignments(text: string): Result<Map<string, string>> {
  if (text.includes("\u0000")) return unparsable("os-release contains NUL bytes");
  const vars = new Map<string, string>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? "").trim();
    if (line === "" || line.startsWith("#")) continue;
    const m = ASSIGNMENT.exec(line);
    if (!m) return unparsable(`line ${i + 1} is not KEY=VALUE: ${excerpt(line)}`);
    const value = unquote(m[2] ?? "");
    if (value === null) return unparsable(`line ${i + 1} has an unterminated quote: ${excerpt(line)}`);
    vars.set(m[1] ?? "", value);
  }
  if (vars.size === 0) return unparsable(`no KEY=VALUE lines in os-release: ${excerpt(text)}`);
  return parsed(vars);
}

// Shell-like word: concatenated bare, '...' and "..." segments; null when a quote never closes.
function unquote(raw: string): string | null {
  let out = "";
  let i = 0;
  while (i < raw.length) {
    const c = raw[i];
    if (c === "'") {
      const end = raw.indexOf("'", i + 1);
      if (end < 0) return null;
      out += raw.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i++;
      let closed = false;
      while (i < raw.length) {
        const d = raw[i];
        if (d === '"') {
          closed = true;
          i++;
          break;
        }
        // os-release(5): inside double quotes only these four may be backslash-escaped.
        if (d === "\\" && i + 1 < raw.length && '"\\$`'.includes(raw[i + 1] ?? "")) {
          out += raw[i + 1];
          i += 2;
          continue;
        }
        out += d;
        i++;
      }
      if (!closed) return null;
    } else if (c === "\\" && i + 1 < raw.length) {
      out += raw[i + 1];
      i += 2;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

export function parseOsRelease(text: string): Result<OsReleaseFields> {
  const r = parseOsReleaseAssignments(text);
  if (!r.ok) return r;
  const get = (k: string): string | null => {
    const v = r.value.get(k);
    return v === undefined || v === "" ? null : v;
  };
  return parsed({
    id: get("ID"),
    idLike: (get("ID_LIKE") ?? "").split(/\s+/).filter((s) => s !== ""),
    versionId: get("VERSION_ID"),
    versionCodename: get("VERSION_CODENAME"),
    prettyName: get("PRETTY_NAME"),
  });
}
