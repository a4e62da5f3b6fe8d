import t from "tap";
import { readFileSync } from "node:fs";
import { defaultRouteSource, parseIpAddrJson, parseIpRouteJson } from "../../../agent/parse/ip-json.js";

const read = (name: string) =>
  readFileSync(new URL(`../../fixtures/tools/ip/${name}`, import.meta.url), "utf8");

t.test("recorded ip -j -d addr show: lo, two veths, secondary and IPv6 addresses", async (t) => {
  const r = parseIpAddrJson(read("addr-show-two-veths.json"));
  t.ok(r.ok);
  if (!r.ok) return;
  t.same(
    r.value.map((i) => [i.name, i.kind, i.operState]),
    [
      ["lo", null, "UNKNOWN"],
      ["veth-a", "veth", "UP"],
      ["veth-a2", "veth", "UP"],
    ],
  );
  t.same(r.value[1]?.addresses.map((a) => `${a.family} ${a.address}/${a.prefixLen} ${a.scope}`).slice(0, 3), [
    "inet 10.10.0.2/24 global",
    "inet 10.10.0.3/24 global",
    "inet6 fd00:10::2/64 global",
  ]);
  t.equal(r.value[1]?.addresses[3]?.scope, "link");
  t.same(r.value[2]?.addresses[0], {
    family: "inet",
    address: "192.168.77.2",
    prefixLen: 24,
    scope: "global",
  });
});

t.test("recorded routes and the source address choice", async (t) => {
  const ifs = parseIpAddrJson(read("addr-show-two-veths.json"));
  const v4 = parseIpRouteJson(read("route-default-v4.json"));
  const v4src = parseIpRouteJson(read("route-default-v4-prefsrc.json"));
  const v6 = parseIpRouteJson(read("route-default-v6.json"));
  const none = parseIpRouteJson(read("route-default-none.json"));
  if (!ifs.ok || !v4.ok || !v4src.ok || !v6.ok || !none.ok) return t.fail("recorded fixture did not parse");
  t.equal(defaultRouteSource(v4.value, ifs.value, "inet"), "10.10.0.2");
  t.equal(defaultRouteSource(v4src.value, ifs.value, "inet"), "10.10.0.3");
  t.equal(defaultRouteSource(v6.value, ifs.value, "inet6"), "fd00:10::2");
  t.equal(defaultRouteSource(none.value, ifs.value, "inet"), null);
  t.same(none.value, []);
});

t.test("empty, garbage, truncated", async (t) => {
  t.same(parseIpRouteJson(""), { ok: true, value: [] });
  t.same(parseIpAddrJson("[]"), { ok: true, value: [] });
  const addr = read("addr-show-two-veths.json");
  t.equal(parseIpAddrJson(addr.slice(0, addr.length / 2)).ok, false);
  t.equal(parseIpAddrJson('Object "addr" is unknown, try "ip help".').ok, false);
  t.equal(parseIpAddrJson('{"ifname":"lo"}').ok, false);
  t.equal(parseIpAddrJson('[{"ifindex":1}]').ok, false);
  t.equal(parseIpRouteJson('[{"gateway":"10.0.0.1"}]').ok, false);
});

t.test(
  "an interface name with ESC: the real ip prints invalid JSON, and that is a named error",
  async (t) => {
    const text = readFileSync(
      new URL("../../fixtures/tools/ip/addr-show-esc-ifname.json", import.meta.url),
      "utf8",
    );
    const r = parseIpAddrJson(text);
    t.equal(r.ok, false);
    t.match(!r.ok && r.error, /not JSON/);
  },
);
