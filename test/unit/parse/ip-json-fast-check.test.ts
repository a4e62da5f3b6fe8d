// `ip -j -d addr show` is checked by hand before zod (isLinkArray): it must accept exactly what
// z.array(Link) accepts, or a document zod would refuse would be read, or one it reads refused. Every
// field of the shape is mutated in turn (missing, null, the wrong type, a float or an unsafe integer
// prefix, an array for an object), and random documents besides; zod is the oracle.
import fc from "fast-check";
import t from "tap";
import { z } from "zod";
import { isLinkArray, Link, parseIpAddrJson } from "../../../agent/parse/ip-json.js";

const oracle = (doc: unknown) => z.array(Link).safeParse(doc).success;

const addr = { family: "inet", local: "10.96.0.1", prefixlen: 32, scope: "global", label: "kube-ipvs0" };
const link = {
  ifindex: 5,
  ifname: "kube-ipvs0",
  operstate: "DOWN",
  linkinfo: { info_kind: "dummy" },
  addr_info: [addr, { ...addr, local: "10.96.0.2" }],
};
const BAD = [undefined, null, 1, 1.5, 2 ** 60, "x", [], {}, true];

t.test("every field mutated: the hand check and zod agree", async (t) => {
  const docs: unknown[] = [[], [link], [link, { ifname: "lo" }], {}, null, "[]", [null], [[]]];
  for (const k of ["ifname", "operstate", "linkinfo", "addr_info"] as const)
    for (const v of BAD) docs.push([{ ...link, [k]: v }]);
  for (const k of ["info_kind"] as const) for (const v of BAD) docs.push([{ ...link, linkinfo: { [k]: v } }]);
  for (const k of ["family", "local", "prefixlen", "scope"] as const)
    for (const v of BAD) docs.push([{ ...link, addr_info: [addr, { ...addr, [k]: v }] }]);
  docs.push([{ ...link, addr_info: [addr, null] }], [{ ...link, addr_info: [addr, []] }]);
  const differ = docs.filter((d) => isLinkArray(d) !== oracle(d));
  t.same(differ, [], `${docs.length} documents`);
  t.ok(docs.some((d) => oracle(d)) && docs.some((d) => !oracle(d)), "both answers occur");
});

t.test("random documents: the hand check and zod agree", async (t) => {
  const value = fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.integer(),
    fc.double(),
    fc.string({ maxLength: 3 }),
    fc.boolean(),
    fc.constant([]),
    fc.constant({}),
  );
  const a = fc.record(
    {
      family: fc.oneof(fc.constant("inet"), value),
      local: value,
      prefixlen: fc.oneof(fc.nat(128), value),
      scope: value,
    },
    { requiredKeys: [] },
  );
  const l = fc.record(
    {
      ifname: fc.oneof(fc.constant("eth0"), value),
      operstate: value,
      linkinfo: fc.oneof(fc.record({ info_kind: value }, { requiredKeys: [] }), value),
      addr_info: fc.oneof(fc.array(fc.oneof(a, value), { maxLength: 3 }), value),
    },
    { requiredKeys: [] },
  );
  fc.assert(
    fc.property(
      fc.oneof(fc.array(fc.oneof(l, value), { maxLength: 3 }), value),
      (doc) => isLinkArray(doc) === oracle(doc),
    ),
    { numRuns: 20_000, seed: 7 },
  );
  t.pass("20,000 documents");
});

t.test("a document refused by the hand check still gets zod's message", async (t) => {
  const r = parseIpAddrJson(JSON.stringify([{ ...link, addr_info: [{ ...addr, prefixlen: "32" }] }]));
  t.equal(r.ok, false);
  t.match(r.ok ? "" : r.error, /ip -j -d addr show has an unexpected shape: .+/);
  const ok = parseIpAddrJson(JSON.stringify([link]));
  t.same(ok.ok ? ok.value[0]!.addresses.map((x) => x.address) : null, ["10.96.0.1", "10.96.0.2"]);
});
