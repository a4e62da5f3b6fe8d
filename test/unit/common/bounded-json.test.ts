// The JSON counts (common/bounded-json.ts): what a parse would build is counted on the text, exactly
// as JSON.parse reads it (strings and escapes included), and a text over a bound is refused unparsed;
// the /verify reader uses them too.
import t from "tap";
import { overBounds, parseBoundedJson } from "../../../common/bounded-json.js";
import { readVerifyAnswer } from "../../../common/verify-result.js";

/** Array items plus object members, counted on the parsed value: what overBounds must agree with. */
function elementsOf(v: unknown): number {
  if (Array.isArray(v)) return v.length + v.reduce((n: number, x) => n + elementsOf(x), 0);
  if (typeof v === "object" && v !== null)
    return Object.values(v).reduce((n: number, x) => n + 1 + elementsOf(x), 0);
  return 0;
}
/** The smallest element bound the text passes. */
function counted(text: string): number {
  let n = 0;
  while (overBounds(text, { maxElements: n, maxDepth: 1000 }) !== null) n++;
  return n;
}

t.test("counts array items and object members at every depth, nothing in strings", async (t) => {
  for (const text of [
    "{}",
    "[]",
    "1",
    '"x"',
    "[1,2,3]",
    '{"a":1,"b":[{},{}],"c":{"d":[[]]}}',
    ' [ { "a" : "[1,2,{]" } , "\\"],[" , [ ] ] ',
    '{"k\\\\":"v\\\\","l":["\\u0022,"]}',
    // Runs of backslashes before a quote: an odd run escapes it, an even run does not.
    JSON.stringify(['a\\"],[', "\\", '\\\\"{', { "\\\\": [1, '\\"'] }, "\\", "]"]),
  ])
    t.equal(counted(text), elementsOf(JSON.parse(text)), text);
});

t.test("refuses too many elements and too deep a nesting, by name, before parsing", async (t) => {
  const many = `[${Array(1001).fill("{}").join(",")}]`;
  t.same(parseBoundedJson(many, { maxElements: 1000, maxDepth: 8 }), {
    ok: false,
    kind: "too-many-elements",
    message: "more than 1000 JSON elements (array items and object members)",
  });
  t.equal(parseBoundedJson(many, { maxElements: 1001, maxDepth: 8 }).ok, true, "at the bound: parsed");
  const deep = `${"[".repeat(9)}${"]".repeat(9)}`;
  t.match(parseBoundedJson(deep, { maxElements: 1000, maxDepth: 8 }), { ok: false, kind: "too-deep" });
  t.equal(parseBoundedJson(deep, { maxElements: 1000, maxDepth: 9 }).ok, true);
  // Brackets inside a string are text, not nesting.
  t.equal(parseBoundedJson(JSON.stringify("[".repeat(100)), { maxElements: 0, maxDepth: 1 }).ok, true);
});

t.test("text that is not JSON is named as such", async (t) => {
  t.match(parseBoundedJson("<html>", { maxElements: 10, maxDepth: 4 }), {
    ok: false,
    kind: "not-json",
    message: /^not JSON: "<html>"/,
  });
});

t.test("a /verify answer of many small objects is refused by name before zod judges it", async (t) => {
  const body = `{"schemaVersion":"1","checks":[${Array(20_000).fill("{}").join(",")}]}`;
  t.same(readVerifyAnswer(body), {
    ok: false,
    error: "answer too large: more than 10000 JSON elements (array items and object members)",
  });
});
