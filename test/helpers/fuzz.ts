// Shared pieces for property-based tests of parsers: hostile strings, mutations of recorded real
// inputs, JSON-tree mutations, wrong encodings and huge inputs. Every parser under test takes text
// and must answer with a typed value or a typed error; these generate the text.
import fc from "fast-check";

/** Runs per property; FUZZ_RUNS=5000 for a deep local run, the default keeps CI in bounded time. */
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 60);

/** Strings a node, kube-proxy or the API could hand us that must never hurt a parser or a renderer. */
export const HOSTILE_STRINGS: readonly string[] = [
  "<script>alert(1)</script>",
  '"><img src=x onerror=alert(1)>',
  "javascript:alert(1)",
  "</pre></td></tr></table>",
  "\u001b[2J\u001b[H",
  "\u001b]8;;http://evil.example/\u0007click\u001b]8;;\u0007",
  "\u001b]0;pwned\u0007",
  "\u009b31m",
  "\r\u001b[1A\u001b[Kforged line",
  "\u202eevil\u202c",
  "\u0000",
  "\ud800",
  "\ufeff",
  "\r\n",
  "%s%n%x",
  "${process.exit(1)}",
  "$(reboot)",
  "`reboot`",
  "'; rm -rf / #",
  "__proto__",
  "constructor",
  '{"__proto__":{"polluted":true}}',
  "| --- | --- |",
  "[link](http://evil.example/)",
  "**bold** _it_ `code`",
  "x".repeat(100_000),
  "kube-".repeat(2000),
  "\t".repeat(1000),
  " ".repeat(5000),
  "9".repeat(400),
  "-1",
  "NaN",
  "Infinity",
  "1e309",
];

export const hostile = fc.constantFrom(...HOSTILE_STRINGS);

/** Any text at all, including lone surrogates and control characters. */
export const anyText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 400 }),
  fc.string({ unit: "grapheme-ascii", maxLength: 400 }),
  fc.array(fc.oneof(hostile, fc.string({ maxLength: 20 })), { maxLength: 20 }).map((a) => a.join("\n")),
);

type Mutation =
  | { op: "truncate"; at: number }
  | { op: "delete"; at: number; len: number }
  | { op: "duplicate"; at: number; len: number }
  | { op: "insert"; at: number; text: string }
  | { op: "replace-line"; line: number; text: string }
  | { op: "swap-lines"; a: number; b: number }
  | { op: "flip"; at: number; char: string }
  | { op: "latin1"; at: number }
  | { op: "big-number"; nth: number; digits: number };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ op: fc.constant("delete" as const), at: fc.nat(), len: fc.nat({ max: 200 }) }),
  fc.record({ op: fc.constant("duplicate" as const), at: fc.nat(), len: fc.nat({ max: 500 }) }),
  fc.record({
    op: fc.constant("insert" as const),
    at: fc.nat(),
    text: fc.oneof(hostile, fc.string({ unit: "binary", maxLength: 30 })),
  }),
  fc.record({
    op: fc.constant("replace-line" as const),
    line: fc.nat(),
    text: fc.oneof(hostile, fc.string({ unit: "binary", maxLength: 60 })),
  }),
  fc.record({ op: fc.constant("swap-lines" as const), a: fc.nat(), b: fc.nat() }),
  fc.record({
    op: fc.constant("flip" as const),
    at: fc.nat(),
    char: fc.constantFrom(" ", "\t", "\n", "0", "-", ":", "{", "}", "[", "]", '"', ",", "=", "#", "\u0000"),
  }),
  fc.record({ op: fc.constant("latin1" as const), at: fc.nat() }),
  // Counters and sizes past 2^53 and past Number.MAX_VALUE (Infinity after Number()).
  fc.record({ op: fc.constant("big-number" as const), nth: fc.nat(), digits: fc.constantFrom(17, 21, 400) }),
);

function apply(text: string, m: Mutation): string {
  const at = (n: number) => (text.length === 0 ? 0 : n % (text.length + 1));
  switch (m.op) {
    case "truncate":
      return text.slice(0, at(m.at));
    case "delete":
      return text.slice(0, at(m.at)) + text.slice(at(m.at) + m.len);
    case "duplicate": {
      const i = at(m.at);
      return text.slice(0, i + m.len) + text.slice(i);
    }
    case "insert":
      return text.slice(0, at(m.at)) + m.text + text.slice(at(m.at));
    case "replace-line": {
      const lines = text.split("\n");
      lines[m.line % lines.length] = m.text;
      return lines.join("\n");
    }
    case "swap-lines": {
      const lines = text.split("\n");
      const a = m.a % lines.length;
      const b = m.b % lines.length;
      [lines[a], lines[b]] = [lines[b]!, lines[a]!];
      return lines.join("\n");
    }
    case "flip": {
      const i = at(m.at);
      return text.slice(0, i) + m.char + text.slice(i + 1);
    }
    case "big-number": {
      const runs = [...text.matchAll(/\d+/g)];
      if (runs.length === 0) return text;
      const r = runs[m.nth % runs.length]!;
      return text.slice(0, r.index) + "9".repeat(m.digits) + text.slice(r.index + r[0].length);
    }
    case "latin1": {
      // The same text as it would arrive from a tool printing in a wrong encoding: UTF-8 bytes
      // read as Latin-1 from some point on, or Latin-1 bytes read as UTF-8 (U+FFFD).
      const i = at(m.at);
      const tail = Buffer.from(text.slice(i), "utf8");
      return (
        text.slice(0, i) +
        (m.at % 2 === 0
          ? tail.toString("latin1")
          : Buffer.from(tail.toString("latin1"), "latin1")
              .toString("utf8")
              .replace(/[\u0080-\u00ff]/g, "\ufffd"))
      );
    }
  }
}

/** A recorded input with one to five mutations applied. */
export function mutated(seeds: readonly string[]): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...seeds), fc.array(mutationArb, { minLength: 1, maxLength: 5 }))
    .map(([seed, ms]) => ms.reduce(apply, seed));
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function paths(v: Json, prefix: (string | number)[] = [], out: (string | number)[][] = []) {
  out.push(prefix);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...prefix, i], out));
  else if (v !== null && typeof v === "object")
    for (const [k, x] of Object.entries(v)) paths(x, [...prefix, k], out);
  return out;
}

function setAt(root: Json, path: (string | number)[], value: Json): Json {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (Array.isArray(root)) {
    const copy = [...root];
    copy[head as number] = setAt(copy[head as number]!, rest, value);
    return copy;
  }
  const obj = root as Record<string, Json>;
  return { ...obj, [head!]: setAt(obj[head!]!, rest, value) };
}

const jsonReplacement: fc.Arbitrary<Json> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
  hostile,
  fc.constantFrom<Json>(null, -1, 0, 1e308, -1e308, 2 ** 53 + 1, 0.5, "", [], {}, true),
);

/**
 * A recorded JSON document, still valid JSON, with one to three values replaced by something of
 * another type, a hostile string, or an edge-case number: the shape a parser must check, not trust.
 */
export function jsonMutated(seeds: readonly string[]): fc.Arbitrary<string> {
  const docs = seeds.map((s) => JSON.parse(s) as Json);
  return fc
    .tuple(
      fc.nat({ max: docs.length - 1 }),
      fc.array(fc.tuple(fc.nat(), jsonReplacement), { minLength: 1, maxLength: 3 }),
    )
    .map(([i, edits]) => {
      let doc: Json = docs[i]!;
      for (const [n, value] of edits) {
        const all = paths(doc);
        doc = setAt(doc, all[n % all.length]!, value);
      }
      return JSON.stringify(doc);
    });
}

/** About `bytes` of text made by repeating `unit` (a recorded input's body, or a pathological line). */
export function huge(unit: string, bytes = 10 * 1024 * 1024): string {
  if (unit.length === 0) return "";
  return unit.repeat(Math.max(1, Math.ceil(bytes / unit.length)));
}

/** Inputs of about 10 MB that make a careless parser quadratic or a careless regex backtrack. */
export function pathological(seed: string): Record<string, string> {
  const firstLine = seed.split("\n").find((l) => l.trim() !== "") ?? "x";
  return {
    "the recorded input repeated to 10 MB": huge(seed.endsWith("\n") ? seed : `${seed}\n`),
    "its first line repeated to 10 MB without a newline": huge(firstLine),
    "10 MB of spaces then x": `${" ".repeat(10 * 1024 * 1024)}x`,
    "10 MB of one-character lines": huge("a\n"),
    "10 MB of open brackets": huge("["),
    "10 MB of '\"a\":' pairs": huge('"a":'),
    "10 MB of NUL bytes": huge("\u0000"),
  };
}
