import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

/** One stanza of a deb822 / apk-style database: field name to (first-line) value. */
type Stanza = Map<string, string>;

/**
 * Splits text made of blank-line-separated stanzas of `Key<sep>value` lines, the shape shared by
 * dpkg's status file (`Key: value`, continuation lines start with a space) and apk's installed
 * database (`K:value`). Continuation lines are dropped: only first-line values are needed here.
 */
export function parseStanzas(text: string): Result<Stanza[]> {
  if (text.includes("\u0000")) return unparsable("database contains NUL bytes");
  const stanzas: Stanza[] = [];
  let current: Stanza = new Map();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (line.trim() === "") {
      if (current.size > 0) stanzas.push(current);
      current = new Map();
      continue;
    }
    if (line.startsWith(" ") || line.startsWith("\t")) {
      if (current.size === 0) return unparsable(`line ${i + 1}: continuation outside a stanza`);
      continue;
    }
    const at = line.indexOf(":");
    if (at <= 0) return unparsable(`line ${i + 1} is not "Field: value": ${excerpt(line)}`);
    current.set(line.slice(0, at), line.slice(at + 1).trim());
  }
  if (current.size > 0) stanzas.push(current);
  return parsed(stanzas);
}
