import t from "tap";
import { readFileSync } from "node:fs";
import { IpvsConnParser, parseIpvsConn } from "../../../agent/parse/ipvs-conn.js";

const fixture = (path: string): string =>
  readFileSync(new URL(`../../fixtures/ipvs/conn/${path}`, import.meta.url), "utf8");

// `ipvsadm -L -n -c` of the same table: ipvsadm reads it over netlink and prints addresses with
// inet_ntop, an independent witness of what /proc says. Its columns: pro expire state source virtual dest.
function witness(text: string): { established: number; byVirtual: Map<string, number> } {
  const byVirtual = new Map<string, number>();
  let established = 0;
  for (const line of text.split("\n").slice(2)) {
    const w = line.split(/\s+/);
    if (w.length < 6) continue;
    const [pro, , state, source, virt] = w as [string, string, string, string, string];
    if (source.endsWith(":0")) continue; // a persistence template
    if (state === "ESTABLISHED") established++;
    const key = `${pro} ${virt}`;
    byVirtual.set(key, (byVirtual.get(key) ?? 0) + 1);
  }
  return { established, byVirtual };
}

t.test("a recorded live table: counts per virtual address agree with ipvsadm -L -n -c", async (t) => {
  const p = parseIpvsConn(fixture("live/proc/net/ip_vs_conn"));
  if (!p.ok) return t.fail(p.error);
  const w = witness(fixture("live/ipvsadm-L-n-c.txt"));
  t.equal(p.value.entries, 12);
  t.equal(p.value.templates, 1, "the -p 10800 Service's template (client port 0) is no connection");
  t.equal(p.value.established, w.established);
  t.equal(p.value.established, 8);
  t.same(p.value.states, { ESTABLISHED: 8, TIME_WAIT: 2, UDP: 1 });
  const got = new Map(
    p.value.byVirtualAddress.map((v) => [
      `${v.protocol} ${v.family === "inet6" ? `[${v.address}]` : v.address}:${v.port}`,
      v.established + v.other,
    ]),
  );
  t.same(Object.fromEntries(got), Object.fromEntries(w.byVirtual));
  t.same(
    p.value.byVirtualAddress[0],
    {
      protocol: "TCP",
      family: "inet",
      address: "10.96.143.30",
      port: 80,
      established: 3,
      other: 2,
    },
    "busiest first",
  );
  t.ok(
    p.value.byVirtualAddress.some((v) => v.family === "inet6" && v.address === "fd00:10:96::1e"),
    "IPv6 addresses in the canonical form VirtualServer.address uses",
  );
});

t.test("an idle table is the header only: zero, read", async (t) => {
  t.same(parseIpvsConn(fixture("idle/proc/net/ip_vs_conn")), {
    ok: true,
    value: {
      entries: 0,
      established: 0,
      templates: 0,
      states: {},
      byVirtualAddress: [],
      virtualAddressCount: 0,
    },
  });
});

t.test("what is not the table is an error naming the line, never zero", async (t) => {
  const header = "Pro FromIP   FPrt ToIP     TPrt DestIP   DPrt State       Expires PEName PEData\n";
  const bad = [
    ["", /empty/],
    ["IP Virtual Server version 1.2.1 (size=4096)\n", /line 1: not the IPVS connection table header/],
    [header + "TCP 0A608F1E 857A\n", /line 2: fewer than 9 fields/],
    [header + "TCP 0A608F1E 857A 0A608F 0050 AC12000A 1F90 ESTABLISHED 898\n", /bad virtual address/],
    [header + "TCP 0A608F1E 857A 0A608F1E 50 AC12000A 1F90 ESTABLISHED 898\n", /bad port/],
    [header + "TCP 0A608F1E 857A 0A608F1E 0050 AC12000A 1F90 ESTABLISHED soon\n", /bad state or expiry/],
    [header + "\nTCP 0A608F1E 857A 0A608F1E 0050 AC12000A 1F90 ESTABLISHED 898\n", /line 2: an empty line/],
  ] as const;
  for (const [text, why] of bad) {
    const p = parseIpvsConn(text);
    t.equal(p.ok, false, JSON.stringify(text.slice(0, 40)));
    if (!p.ok) t.match(p.error, why);
  }
});

t.test("a persistence-engine suffix (SIP) and other protocols are read, not refused", async (t) => {
  const p = new IpvsConnParser();
  p.push("Pro FromIP   FPrt ToIP     TPrt DestIP   DPrt State       Expires PEName PEData");
  p.push("UDP 0A000001 13C4 0A600001 13C4 0A000002 13C4 UDP             180 sip abc123@example");
  p.push("ICMP 0A000001 0800 0A600001 0000 0A000002 0000 ERR!              5");
  const r = p.finish();
  if (!r.ok) return t.fail(r.error);
  t.equal(r.value.entries, 2);
  t.same(
    r.value.byVirtualAddress.map((v) => v.protocol),
    ["UDP"],
    "ICMP names no Service",
  );
});
