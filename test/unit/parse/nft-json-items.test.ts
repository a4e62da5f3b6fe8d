// The chain listing read item by item (agent/parse/nft-json-items.ts) against the whole-tree parse it
// replaces in the probe: the same chains from every recorded listing and from any JSON document, and a
// failure wherever the whole-tree parse fails (truncated, mutated, not JSON), never fewer chains.
import { readdirSync, readFileSync, statSync } from "node:fs";
import fc from "fast-check";
import t from "tap";
import { eachNftChain, parseNftChains, type NftChain } from "../../../agent/parse/nft-json.js";
import { FUZZ_RUNS, jsonMutated, mutated } from "../../helpers/fuzz.js";

const rec = new URL("../../fixtures/netfilter/recorded/", import.meta.url);
const listings: [string, string][] = readdirSync(rec)
  .filter((d) => statSync(new URL(d, rec)).isDirectory())
  .map((d) => [d, new URL(`${d}/nft-list-chains.json`, rec)] as const)
  .filter(([, f]) => {
    try {
      return statSync(f).isFile();
    } catch {
      return false;
    }
  })
  .map(([d, f]) => [d, readFileSync(f, "utf8")]);

function itemByItem(text: string): { ok: true; value: NftChain[] } | { ok: false; error: string } {
  const out: NftChain[] = [];
  const r = eachNftChain(text, (c) => out.push(c));
  if (!r.ok) return r;
  if (r.value !== out.length) throw new Error(`counted ${r.value}, visited ${out.length}`);
  return { ok: true, value: out };
}

/** The two readers agree: the same chains, or both fail (the item reader also on a repeated key). */
function agree(text: string): string | null {
  const whole = parseNftChains(text);
  const items = itemByItem(text);
  if (whole.ok && items.ok) {
    return JSON.stringify(whole.value) === JSON.stringify(items.value) ? null : "different chains";
  }
  if (!whole.ok && !items.ok) return items.error.length > 0 ? null : "empty error";
  if (whole.ok && !items.ok && /"nftables" appears twice/.test(items.error)) return null;
  return whole.ok
    ? `only the item reader failed: ${!items.ok && items.error}`
    : "only the whole-tree parse failed";
}

t.test("every recorded chain listing: the same chains, in order", async (t) => {
  t.ok(listings.length >= 8, `${listings.length} recorded listings`);
  for (const [scenario, text] of listings) {
    const r = itemByItem(text);
    if (!r.ok) return t.fail(`${scenario}: ${r.error}`);
    t.same(r.value, (parseNftChains(text) as { value: NftChain[] }).value, scenario);
  }
});

t.test("documents the cutting must get right", async (t) => {
  const chain = (name: string) =>
    `{"chain": {"family": "ip", "table": "t", "handle": 1, "name": ${JSON.stringify(name)}}}`;
  const cases: [string, string][] = [
    ["empty array", '{"nftables": []}'],
    ["spaced", ' \n{ "nftables" :\t[ ' + chain("a") + " ,\r\n" + chain("b") + " ] }\n"],
    [
      "brackets and quotes inside names",
      `{"nftables": [${chain('a"]}{,[')}, ${chain("b\\\\")}, ${chain("}")}]}`,
    ],
    ["escaped key", '{"nft\\u0061bles": [' + chain("a") + "]}"],
    [
      "other keys around",
      `{"x": {"nftables": [1]}, "nftables": [${chain("a")}], "y": [1, "]", {"z": null}]}`,
    ],
    [
      "metainfo and tables mixed in",
      `{"nftables": [{"metainfo": {"json_schema_version": 1}}, {"table": {"family": "ip", "name": "t"}}, ${chain("a")}]}`,
    ],
    ["numbers, literals", `{"a": -1.5e3, "b": true, "c": null, "nftables": [${chain("a")}]}`],
  ];
  for (const [what, text] of cases) {
    const r = itemByItem(text);
    t.ok(r.ok, what);
    t.equal(agree(text), null, what);
  }
  const bad: [string, string, RegExp][] = [
    ["no nftables", '{"x": []}', /no "nftables" array/],
    ["nftables not an array", '{"nftables": {}}', /no "nftables" array/],
    ["an empty object", "{}", /no "nftables" array/],
    ["a top-level array", "[]", /not JSON/],
    ["trailing comma", `{"nftables": [${chain("a")},]}`, /not JSON/],
    ["missing comma", `{"nftables": [${chain("a")} ${chain("b")}]}`, /not JSON/],
    ["trailing garbage", `{"nftables": [${chain("a")}]} x`, /not JSON/],
    ["two documents", `{"nftables": []}{"nftables": []}`, /not JSON/],
    ["an item that is not an object", '{"nftables": [1]}', /item is not an object/],
    ["a bad chain", '{"nftables": [{"chain": {"family": "ip"}}]}', /bad chain/],
    [
      "an unknown family",
      '{"nftables": [{"chain": {"family": "ipx", "table": "t", "name": "a"}}]}',
      /bad chain/,
    ],
    ["an unterminated string", '{"nftables": [{"chain": {"name": "a}}]}', /not JSON/],
    ["a repeated nftables", `{"nftables": [${chain("a")}], "nftables": []}`, /appears twice/],
    ["empty input", "", /not JSON/],
  ];
  for (const [what, text, why] of bad) {
    const r = itemByItem(text);
    t.equal(r.ok, false, what);
    t.match(!r.ok && r.error, why, what);
    t.equal(agree(text), null, what);
  }
});

t.test("every truncation of a recorded listing fails, as the whole-tree parse does", async (t) => {
  const chains = (s: string) => s.split('"chain"').length - 1;
  const [, text] = listings
    .filter(([, s]) => chains(s) >= 3)
    .reduce((a, b) => (b[1].length < a[1].length ? b : a));
  let checked = 0;
  for (let end = 0; end < text.trimEnd().length; end++) {
    const problem = agree(text.slice(0, end));
    if (problem !== null) return t.fail(`cut at ${end}: ${problem}`);
    if (itemByItem(text.slice(0, end)).ok) return t.fail(`cut at ${end} read as a whole listing`);
    checked++;
  }
  t.ok(checked > 100, `${checked} cuts`);
});

t.test("mutated listings and arbitrary JSON: the two readers agree", async (t) => {
  const seeds = listings.map(([, text]) => text).filter((s) => s.length < 200_000);
  const opts = { numRuns: FUZZ_RUNS * 5, endOnFailure: true };
  const holds = (text: string) => {
    const problem = agree(text);
    if (problem !== null) throw new Error(`${problem}: ${JSON.stringify(text.slice(0, 300))}`);
  };
  fc.assert(fc.property(mutated(seeds), holds), opts);
  fc.assert(fc.property(jsonMutated(seeds), holds), opts);
  fc.assert(
    fc.property(fc.json(), fc.json(), (a, b) => {
      holds(a);
      holds(`{"nftables": [${b}]}`);
      holds(`{"nftables": ${b}}`);
    }),
    opts,
  );
  t.pass(`${FUZZ_RUNS * 5 * 3} inputs`);
});

t.test(
  "megabyte strings, deep nesting and escapes never throw (no backtracking, no recursion)",
  async (t) => {
    const cases: [string, string, boolean][] = [
      ["an unterminated 20 MB string", '{"nftables": ["' + "a".repeat(20e6) + "]}", false],
      ["a 20 MB string in an item", '{"nftables": [{"x": "' + "a".repeat(20e6) + '"}]}', true],
      ["5 M escaped backslashes", '{"nftables": [{"x": "' + "\\\\".repeat(5e6) + '"}]}', true],
      ["an escaped quote that ends nothing", '{"nftables": [{"x": "' + '\\"'.repeat(1e6) + "]}", false],
      ["a million open brackets", '{"nftables": [' + "[".repeat(1e6) + "]}", false],
      ["a million balanced brackets", '{"nftables": [' + "[".repeat(1e6) + "]".repeat(1e6) + "]}", false],
    ];
    for (const [what, text, ok] of cases) {
      let r: ReturnType<typeof itemByItem> | undefined;
      t.doesNotThrow(() => (r = itemByItem(text)), what);
      t.equal(r?.ok, ok, what);
      t.equal(agree(text), null, what);
    }
  },
);
