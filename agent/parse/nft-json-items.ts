import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

// `nft -j list chains` at 10,000 Services is 15 MB of JSON; one JSON.parse of it is a 21 MB tree held
// at once, which sets the scan worker's heap high-water mark (bench/results/rss.md). Here the listing is
// cut into its items by a scan that only tracks strings and brackets, and each item is JSON.parse'd on
// its own, so a caller keeps what it needs of one item and the rest dies young. Every part of the text
// still goes through JSON.parse: the scan decides only where an item ends, never what it holds.

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

// The next quote or bracket: one character class, so no backtracking however long the text.
const STRUCTURAL = /["{}[\]]/g;

const isWs = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

class Cursor {
  pos = 0;
  constructor(readonly text: string) {}
  ws(): number {
    const t = this.text;
    let p = this.pos;
    while (p < t.length && isWs(t.charCodeAt(p))) p++;
    this.pos = p;
    return p < t.length ? t.charCodeAt(p) : -1;
  }
  /** The end (exclusive) of the string opening at `from`, or -1. */
  stringEnd(from: number): number {
    const t = this.text;
    // A quote ends the string unless an odd run of backslashes escapes it. Not a regular expression:
    // V8's backtracking stack overflows on a string of megabytes.
    for (let p = from + 1; ;) {
      const q = t.indexOf('"', p);
      if (q < 0) return -1;
      let k = q - 1;
      while (t.charCodeAt(k) === BACKSLASH) k--;
      if ((q - 1 - k) % 2 === 0) return q + 1;
      p = q + 1;
    }
  }
  /** The end (exclusive) of the value starting at the cursor, or -1; JSON.parse checks what it holds. */
  valueEnd(): number {
    const t = this.text;
    const first = t.charCodeAt(this.pos);
    if (first === QUOTE) return this.stringEnd(this.pos);
    if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
      let p = this.pos;
      while (p < t.length) {
        const c = t.charCodeAt(p);
        if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || isWs(c)) break;
        p++;
      }
      return p;
    }
    // The regular expression skips to the next quote or bracket (test(), not exec(): nothing
    // allocated per token, which on 15 MB is over a million tokens).
    let depth = 0;
    STRUCTURAL.lastIndex = this.pos;
    while (STRUCTURAL.test(t)) {
      const p = STRUCTURAL.lastIndex - 1;
      const c = t.charCodeAt(p);
      if (c === QUOTE) {
        const end = this.stringEnd(p);
        if (end < 0) return -1;
        STRUCTURAL.lastIndex = end;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (--depth === 0) return p + 1;
    }
    return -1;
  }
  /** The value at the cursor, parsed, and the cursor moved past it; not ok when it is not JSON. */
  value(): { ok: true; v: unknown } | { ok: false } {
    // Fast path for nft's one-object items ({"chain": {...}}): try up to the next "}}". When that
    // slice parses, it is the whole item (an object's extent is fixed by its opening brace, and the
    // slice is a prefix of the text); when it does not, the scan below finds the end.
    if (this.text.charCodeAt(this.pos) === OPEN_BRACE) {
      const close = this.text.indexOf("}}", this.pos);
      if (close > 0) {
        try {
          const v: unknown = JSON.parse(this.text.slice(this.pos, close + 2));
          this.pos = close + 2;
          return { ok: true, v };
        } catch {
          // not the item's end: scanned below
        }
      }
    }
    const end = this.valueEnd();
    if (end <= this.pos) return { ok: false };
    try {
      const v: unknown = JSON.parse(this.text.slice(this.pos, end));
      this.pos = end;
      return { ok: true, v };
    } catch {
      return { ok: false };
    }
  }
}

/**
 * Calls `visit` with each object under the top-level "nftables" array, in order, each parsed alone.
 * `visit` returns an error message to stop, or null. Accepts exactly what JSON.parse accepts for a
 * document `{"nftables": [{...}, ...], ...}`, except a repeated "nftables" key (JSON.parse would keep
 * the last one silently; nft never prints two), which is an error. Returns the number of items.
 */
export function eachNftItem(
  text: string,
  command: string,
  visit: (item: Obj) => string | null,
): Result<number> {
  const notJson = () => unparsable<number>(`${command}: not JSON: ${excerpt(text)}`);
  const c = new Cursor(text);
  if (c.ws() !== OPEN_BRACE) return notJson();
  c.pos++;
  // What the last "nftables" key held: JSON.parse keeps the last of repeated keys, and so does this.
  let nftables: "unseen" | "array" | "not an array" = "unseen";
  let items = 0;
  let next = c.ws();
  if (next === CLOSE_BRACE) c.pos++;
  else {
    for (;;) {
      if (next !== QUOTE) return notJson();
      const keyEnd = c.stringEnd(c.pos);
      if (keyEnd < 0) return notJson();
      let key: unknown;
      try {
        key = JSON.parse(text.slice(c.pos, keyEnd));
      } catch {
        return notJson();
      }
      c.pos = keyEnd;
      if (c.ws() !== COLON) return notJson();
      c.pos++;
      next = c.ws();
      if (key === "nftables" && next === OPEN_BRACKET) {
        if (nftables === "array") return unparsable(`${command}: "nftables" appears twice: ${excerpt(text)}`);
        nftables = "array";
        c.pos++;
        if (c.ws() === CLOSE_BRACKET) c.pos++;
        else {
          for (;;) {
            c.ws();
            const it = c.value();
            if (!it.ok) return notJson();
            if (!isObj(it.v))
              return unparsable(`${command}: item is not an object: ${excerpt(JSON.stringify(it.v))}`);
            const stop = visit(it.v);
            if (stop !== null) return unparsable(stop);
            items++;
            const sep = c.ws();
            c.pos++;
            if (sep === CLOSE_BRACKET) break;
            if (sep !== COMMA) return notJson();
          }
        }
      } else {
        if (next === -1) return notJson();
        const v = c.value();
        if (!v.ok) return notJson();
        if (key === "nftables") nftables = "not an array";
      }
      const sep = c.ws();
      c.pos++;
      if (sep === CLOSE_BRACE) break;
      if (sep !== COMMA) return notJson();
      next = c.ws();
    }
  }
  if (c.ws() !== -1) return notJson();
  if (nftables !== "array") return unparsable(`${command}: no "nftables" array: ${excerpt(text)}`);
  return parsed(items);
}
