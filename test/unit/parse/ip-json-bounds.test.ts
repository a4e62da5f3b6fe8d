// What an `ip -j` listing may make JSON.parse build (agent/parse/listing-bounds.ts): JSON.parse's own
// working memory is outside the scan thread's heap limit, so a listing of millions of small objects
// is refused by its count, named, before it is parsed; an ordinary large listing is not.
import t from "tap";
import { parseIpAddrJson } from "../../../agent/parse/ip-json.js";
import { parseKubeIpvs0Json } from "../../../agent/parse/kube-ipvs0.js";
import { LISTING_JSON_BOUNDS } from "../../../agent/parse/listing-bounds.js";

const listing = (entries: string[]) =>
  `[{"ifindex":2,"ifname":"kube-ipvs0","operstate":"DOWN","linkinfo":{"info_kind":"dummy"},"addr_info":[${entries.join(",")}]}]`;
const address = (i: number) =>
  `{"family":"inet","local":"10.96.${(i >> 8) & 255}.${i & 255}","prefixlen":32,"scope":"global","label":"kube-ipvs0","valid_life_time":4294967295,"preferred_life_time":4294967295}`;

t.test("millions of small objects are refused by count, by name", async (t) => {
  const hostile = listing(Array(LISTING_JSON_BOUNDS.maxElements + 1).fill("{}"));
  t.match(parseIpAddrJson(hostile), {
    ok: false,
    error: /^ip -j -d addr show is too large to parse: more than 500000 JSON elements/,
  });
  t.match(parseKubeIpvs0Json(hostile), {
    ok: false,
    error: /too large to parse: more than 500000 JSON elements/,
  });
});

t.test("kube-ipvs0 with 20,000 addresses (10,000 Services, dual-stack) is read", async (t) => {
  const r = parseIpAddrJson(listing(Array.from({ length: 20_000 }, (_, i) => address(i))));
  t.equal(r.ok, true);
  if (r.ok) t.equal(r.value[0]?.addresses.length, 20_000);
});
