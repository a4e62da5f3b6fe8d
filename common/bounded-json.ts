/**
 * How much a JSON text may make JSON.parse build. A byte cap alone does not bound the heap: 16 MiB of
 * small objects (`[{},{},…]`) is millions of objects, and one hostile agent took the collector from
 * 90 MB to 358 MB with one such answer.
 */
export interface JsonBounds {
  /** Array items plus object members, at every depth. */
  maxElements: number;
  /** Arrays and objects open at once. */
  maxDepth: number;
}

type JsonRefusal = { kind: "too-many-elements" | "too-deep"; message: string };

/**
 * Counts what a parse of `text` would build, without building it: null when within `b`. The count
 * follows JSON's own string rules (a quote ends a string unless escaped), so on the valid prefix that
 * JSON.parse builds before any syntax error the count is exact; what is not JSON is left to JSON.parse.
 */
export function overBounds(text: string, b: JsonBounds): JsonRefusal | null {
  let elements = 0;
  let depth = 0;
  // Just after `{` or `[`: the next token is the container's first item, unless it closes it.
  let opened = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    if (opened && c !== 0x7d && c !== 0x5d) elements++;
    opened = false;
    if (c === 0x22) {
      // A string's body holds nothing to count: jump to its closing quote, the first one after an even
      // run of backslashes (indexOf searches natively; walking every character cost as much as the parse).
      for (;;) {
        const q = text.indexOf('"', i + 1);
        if (q < 0) return null; // unterminated: JSON.parse names it
        let k = q - 1;
        while (text.charCodeAt(k) === 0x5c) k--;
        i = q;
        if ((q - 1 - k) % 2 === 0) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > b.maxDepth)
        return { kind: "too-deep", message: `JSON nested deeper than ${b.maxDepth} levels` };
      opened = true;
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x2c) elements++;
    if (elements > b.maxElements)
      return {
        kind: "too-many-elements",
        message: `more than ${b.maxElements} JSON elements (array items and object members)`,
      };
  }
  return null;
}

/** JSON.parse within bounds: the document, or why it was not parsed. Never throws. */
export function parseBoundedJson(
  text: string,
  b: JsonBounds,
): { ok: true; doc: unknown } | { ok: false; kind: JsonRefusal["kind"] | "not-json"; message: string } {
  const over = overBounds(text, b);
  if (over) return { ok: false, ...over };
  try {
    return { ok: true, doc: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, kind: "not-json", message: `not JSON: ${JSON.stringify(text.slice(0, 60))}` };
  }
}
