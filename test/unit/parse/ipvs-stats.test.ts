import t from "tap";
import { readFileSync } from "node:fs";
import { parseIpvsStats } from "../../../agent/parse/ipvs-stats.js";

const fx = (name: string) =>
  readFileSync(new URL(`../../fixtures/ipvs/stats/${name}/proc/net/ip_vs_stats`, import.meta.url), "utf8");

t.test("recorded totals: hexadecimal, as the kernel prints them", async (t) => {
  t.same(parseIpvsStats(fx("traffic")), {
    ok: true,
    value: {
      connections: 10,
      incomingPackets: 0x34,
      outgoingPackets: 0x32,
      incomingBytes: 0x31f0,
      outgoingBytes: 0xe60,
    },
  });
  // Ten connections of 1000 bytes each way in, 100 out, plus headers: the sizes are plausible.
  const v = parseIpvsStats(fx("traffic"));
  t.ok(v.ok && v.value.incomingBytes > 10_000 && v.value.outgoingBytes > 1_000);
  t.same(parseIpvsStats(fx("idle")), {
    ok: true,
    value: { connections: 0, incomingPackets: 0, outgoingPackets: 0, incomingBytes: 0, outgoingBytes: 0 },
  });
});

t.test("64-bit counters past 2^53 keep their size", async (t) => {
  const big = fx("idle").replace(
    /^( +0 +0 +0 +0 +0)$/m,
    "FFFFFFFF        1        2 FFFFFFFFFFFFFFFF               10",
  );
  const p = parseIpvsStats(big);
  t.ok(p.ok && p.value.incomingBytes > 1.8e19 && p.value.connections === 0xffffffff);
});

t.test("anything else is a named error, never zeros", async (t) => {
  for (const bad of [
    "",
    "<html>502</html>\n",
    fx("idle").replace(/^ +0 +0 +0 +0 +0$/m, "       0        0"),
    fx("idle").replace(/^ +0 +0/m, "  zz  0"),
  ]) {
    const p = parseIpvsStats(bad);
    t.equal(p.ok, false, JSON.stringify(bad.slice(0, 40)));
  }
});
