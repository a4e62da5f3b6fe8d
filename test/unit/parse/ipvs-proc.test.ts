import t from "tap";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { VirtualServer } from "../../../agent/facts/ipvs.js";
import { IpvsProcParser, parseIpvsProc } from "../../../agent/parse/ipvs-proc.js";
import { parseIpvsadmTimeout } from "../../../agent/parse/ipvsadm-timeout.js";

const fixture = (path: string): string => {
  const buf = readFileSync(new URL(`../../fixtures/ipvs/${path}`, import.meta.url));
  return (path.endsWith(".gz") ? gunzipSync(buf) : buf).toString("utf8");
};
const proc = (scenario: string) =>
  fixture(scenario === "large" ? "large/proc/net/ip_vs.gz" : `${scenario}/proc/net/ip_vs`);
const ipvsadmLn = (scenario: string) =>
  fixture(scenario === "large" ? "large/ipvsadm-L-n.txt.gz" : `${scenario}/ipvsadm-L-n.txt`);

const SCENARIOS = ["empty", "kube-small", "ipv6", "sctp", "fwm", "persistent", "schedulers", "large"];
const HZ = 100; // the UML kernel the fixtures were recorded on (CONFIG_HZ=100)

// `ipvsadm -L -n` of the same table, read here only to cross-check: ipvsadm gets the table over
// netlink and prints addresses with inet_ntop, so it is an independent witness of /proc's content.
interface AdmService {
  key: string;
  family: "inet" | "inet6" | null;
  scheduler: string;
  persistentS: number | null;
  ops: boolean;
  realServers: string[];
  active: number;
  inactive: number;
}
function parseIpvsadmLn(text: string): AdmService[] {
  const out: AdmService[] = [];
  for (const line of text.split("\n").slice(3)) {
    if (line === "") continue;
    const rs = /^ {2}-> (\S+) +\S+ +\d+ +(\d+) +(\d+)/.exec(line);
    if (rs) {
      const cur = out[out.length - 1]!;
      cur.realServers.push(rs[1]!);
      cur.active += Number(rs[2]);
      cur.inactive += Number(rs[3]);
      continue;
    }
    const m = /^(TCP|UDP|SCTP|FWM) +(\S+)( IPv6)? (\S+)(.*)$/.exec(line);
    if (!m) throw new Error(`ipvsadm line: ${line}`);
    const [, proto, where, v6, sched, rest] = m;
    const persistent = / persistent (\d+)/.exec(rest!);
    out.push({
      key: `${proto} ${where}`,
      family: proto === "FWM" ? (v6 ? "inet6" : "inet") : where!.startsWith("[") ? "inet6" : "inet",
      scheduler: sched!,
      persistentS: persistent ? Number(persistent[1]) : null,
      ops: / ops\b/.test(rest!),
      realServers: [],
      active: 0,
      inactive: 0,
    });
  }
  return out;
}
const keyOf = (v: VirtualServer): string =>
  v.protocol === "FWM"
    ? `FWM ${v.fwmark}`
    : `${v.protocol} ${v.family === "inet6" ? `[${v.address}]` : v.address}:${v.port}`;

for (const scenario of SCENARIOS) {
  t.test(`${scenario}: /proc/net/ip_vs agrees with ipvsadm -L -n of the same table`, async (t) => {
    const r = parseIpvsProc(proc(scenario));
    if (!r.ok) return t.fail(r.error);
    const table = r.value;
    t.equal(table.version, "1.2.1");
    t.equal(table.connTableSize, 4096);
    for (const v of table.virtualServers) VirtualServer.parse(v);
    const adm = new Map(parseIpvsadmLn(ipvsadmLn(scenario)).map((s) => [s.key, s]));
    t.equal(table.virtualServers.length, adm.size, "same number of virtual servers");
    for (const v of table.virtualServers) {
      const a = adm.get(keyOf(v));
      if (!a) {
        t.fail(`${keyOf(v)} is not in ipvsadm's list`);
        continue;
      }
      t.equal(v.scheduler, a.scheduler, `${a.key} scheduler`);
      t.equal(v.realServers, a.realServers.length, `${a.key} real servers`);
      t.equal(v.activeConns, a.active, `${a.key} active`);
      t.equal(v.inactiveConns, a.inactive, `${a.key} inactive`);
      t.equal(v.flags.includes("ops"), a.ops, `${a.key} ops`);
      t.equal(
        v.persistentTimeoutJiffies,
        a.persistentS === null ? null : a.persistentS * HZ,
        `${a.key} persistence`,
      );
      // /proc cannot tell an FWM service's family without real servers; ipvsadm can.
      t.equal(v.family, v.protocol === "FWM" && v.realServers === 0 ? null : a.family, `${a.key} family`);
    }
    t.equal(
      table.realServerCount,
      [...adm.values()].reduce((n, s) => n + s.realServers.length, 0),
    );
    const bySched: Record<string, number> = {};
    for (const s of adm.values()) bySched[s.scheduler] = (bySched[s.scheduler] ?? 0) + 1;
    t.same(table.schedulers, bySched);
    t.equal(table.keptRealServers, null, "nothing kept unless asked");
  });
}

t.test("empty table", async (t) => {
  t.same(parseIpvsProc(proc("empty")), {
    ok: true,
    value: {
      version: "1.2.1",
      connTableSize: 4096,
      virtualServers: [],
      realServerCount: 0,
      schedulers: {},
      keptRealServers: null,
    },
  });
});

t.test("kube-small: a kube-proxy-like table, literally", async (t) => {
  const r = parseIpvsProc(proc("kube-small"));
  if (!r.ok) return t.fail(r.error);
  const byKey = new Map(r.value.virtualServers.map((v) => [keyOf(v), v]));
  t.same(byKey.get("TCP 10.96.0.1:443"), {
    protocol: "TCP",
    family: "inet",
    address: "10.96.0.1",
    port: 443,
    fwmark: null,
    scheduler: "rr",
    flags: [],
    persistentTimeoutJiffies: null,
    realServers: 3,
    activeConns: 0,
    inactiveConns: 0,
  });
  t.equal(byKey.get("UDP 10.96.0.10:53")?.realServers, 2);
  t.equal(byKey.get("TCP 172.18.0.10:30080")?.realServers, 3, "the NodePort on the node address");
  t.equal(byKey.get("TCP 10.96.200.1:80")?.realServers, 0, "a Service without endpoints");
  t.equal(byKey.get("TCP 10.96.143.20:80")?.activeConns, 3, "connections from the node are counted");
  t.equal(r.value.virtualServers.length, 8);
  t.equal(r.value.realServerCount, 16);
  t.same(r.value.schedulers, { rr: 8 });
});

t.test("ipv6: bracketed hex becomes inet_ntop's compressed text", async (t) => {
  const r = parseIpvsProc(proc("ipv6"), {
    keepRealServersOf: { protocol: "TCP", address: "2001:db8:0:0:1::1", port: 80 },
  });
  if (!r.ok) return t.fail(r.error);
  const v6 = r.value.virtualServers.filter((v) => v.family === "inet6").map((v) => `${v.address} ${v.port}`);
  t.same(v6.sort(), [
    "2001:db8:1:2:3:4:5:6 80", // no zero run
    "2001:db8::1:0:0:1 80", // two runs of two: the first one is compressed
    "fd00:10:96::1 443",
    "fd00:10:96::a 53",
  ]);
  t.same(r.value.keptRealServers, [
    {
      family: "inet6",
      address: "2001:db8:0:1::1",
      port: 8080,
      forward: "Masq",
      weight: 1,
      activeConns: 0,
      inactiveConns: 0,
    },
  ]);
  t.equal(r.value.virtualServers.filter((v) => v.family === "inet").length, 1, "IPv4 beside IPv6");
});

t.test("sctp, fwm, persistence, schedulers and flags", async (t) => {
  const sctp = parseIpvsProc(proc("sctp"));
  if (!sctp.ok) return t.fail(sctp.error);
  t.same(sctp.value.virtualServers.map((v) => [v.protocol, v.address, v.port, v.realServers]).sort(), [
    ["SCTP", "10.96.0.20", 3868, 2],
    ["SCTP", "fd00:10:96::20", 3868, 1],
  ]);

  const fwm = parseIpvsProc(proc("fwm"), { keepRealServersOf: { protocol: "FWM", fwmark: 1 } });
  if (!fwm.ok) return t.fail(fwm.error);
  t.same(
    fwm.value.virtualServers
      .map((v) => [v.fwmark, v.family, v.address, v.port, v.scheduler, v.realServers])
      .sort((a, b) => Number(a[0]) - Number(b[0])),
    [
      [1, "inet", null, null, "rr", 2],
      [2, "inet6", null, null, "rr", 1],
      [3, null, null, null, "rr", 0],
      [4096, null, null, null, "wlc", 0],
    ],
  );
  t.same(fwm.value.keptRealServers?.map((s) => `${s.address}:${s.port}`).sort(), [
    "10.244.0.7:0",
    "10.244.0.8:0",
  ]);

  const per = parseIpvsProc(proc("persistent"));
  if (!per.ok) return t.fail(per.error);
  t.same(per.value.virtualServers.map((v) => [v.address, v.flags, v.persistentTimeoutJiffies]).sort(), [
    ["10.96.0.30", ["persistent"], 60000],
    ["10.96.0.31", ["persistent"], 1080000], // 10800 s, kube-proxy's default affinity timeout
    ["10.96.0.32", ["persistent"], 60000],
    ["fd00:10:96::30", ["persistent"], 60000],
  ]);

  const sched = parseIpvsProc(proc("schedulers"), {
    keepRealServersOf: { protocol: "TCP", address: "192.168.50.100", port: 80 },
  });
  if (!sched.ok) return t.fail(sched.error);
  t.same(sched.value.schedulers, { rr: 1, lc: 1, sh: 2, wrr: 2, mh: 1, wlc: 1 });
  const ops = sched.value.virtualServers.find((v) => v.protocol === "UDP");
  t.same(ops?.flags, ["ops"]);
  t.same(
    sched.value.keptRealServers?.map((s) => [s.address, s.forward, s.weight]).sort(),
    [
      ["192.168.50.11", "Route", 100],
      ["192.168.50.12", "Route", 0],
      ["192.168.60.13", "Tunnel", 50],
    ],
    "a keepalived-style VIP: direct routing, a drained server, a tunnel",
  );
});

t.test("keepRealServersOf: canonical match, and null when there is no such virtual server", async (t) => {
  const r = parseIpvsProc(proc("ipv6"), {
    keepRealServersOf: { protocol: "TCP", address: "FD00:10:96:0:0:0:0:1", port: 443 },
  });
  t.same(r.ok && r.value.keptRealServers?.map((s) => s.address).sort(), [
    "fd00:10:244:1::2",
    "fd00:10:244:2::3",
  ]);
  const udp = parseIpvsProc(proc("ipv6"), {
    keepRealServersOf: { protocol: "UDP", address: "fd00:10:96::1", port: 443 },
  });
  t.equal(udp.ok && udp.value.keptRealServers, null, "protocol is part of the key");
  const none = parseIpvsProc(proc("kube-small"), {
    keepRealServersOf: { protocol: "TCP", address: "10.96.0.1", port: 80 },
  });
  t.equal(none.ok && none.value.keptRealServers, null);
  const empty = parseIpvsProc(proc("kube-small"), {
    keepRealServersOf: { protocol: "TCP", address: "10.96.200.1", port: 80 },
  });
  t.same(empty.ok && empty.value.keptRealServers, [], "found, without endpoints");
});

t.test("large: 1,000 Services x 10 endpoints", async (t) => {
  const r = parseIpvsProc(proc("large"), {
    keepRealServersOf: { protocol: "UDP", address: "10.96.0.10", port: 53 },
  });
  if (!r.ok) return t.fail(r.error);
  t.equal(r.value.virtualServers.length, 1000);
  t.equal(r.value.realServerCount, 10000);
  t.same(r.value.schedulers, { rr: 1000 });
  t.equal(r.value.virtualServers.filter((v) => v.protocol === "UDP").length, 100);
  t.equal(r.value.keptRealServers?.length, 10);
});

// The kernel's own format, for a table the size the parser is built for: 10,000 Services with 10
// endpoints each is 110,003 lines, 6 MB (a real node adds NodePort entries: 121k lines, 7 MB).
function syntheticLines(services: number, perService: number): string[] {
  const hex = (n: number, w: number) => n.toString(16).toUpperCase().padStart(w, "0");
  const lines = [
    "IP Virtual Server version 1.2.1 (size=4096)",
    "Prot LocalAddress:Port Scheduler Flags",
    "  -> RemoteAddress:Port Forward Weight ActiveConn InActConn",
  ];
  for (let i = 0; i < services; i++) {
    lines.push(`TCP  ${hex(0x0a600000 + i, 8)}:0050 rr  `);
    for (let j = 0; j < perService; j++) {
      lines.push(
        `  -> ${hex(0x0af40000 + i * perService + j, 8)}:1F90      Masq    1      2          3         `,
      );
    }
  }
  return lines;
}

t.test("10,000 Services: line by line, summaries only", async (t) => {
  const lines = syntheticLines(10_000, 10);
  t.ok(lines.join("\n").length > 6_000_000, "about as large as a real 10,000-Service table");
  const started = performance.now();
  const p = new IpvsProcParser({ keepRealServersOf: { protocol: "TCP", address: "10.96.39.15", port: 80 } });
  for (const l of lines) p.push(l);
  const r = p.finish();
  const ms = performance.now() - started;
  if (!r.ok) return t.fail(r.error);
  t.equal(r.value.virtualServers.length, 10_000);
  t.equal(r.value.realServerCount, 100_000);
  t.equal(r.value.virtualServers[9999]?.activeConns, 20);
  t.equal(r.value.virtualServers[9999]?.inactiveConns, 30);
  t.equal(r.value.keptRealServers?.length, 10, "10.96.39.15 is service 9999 (0x270F)");
  t.ok(ms < 5000, `parsed in ${Math.round(ms)} ms`);
});

t.test("garbage and truncated input are typed errors, never a throw", async (t) => {
  const good = proc("kube-small");
  const bad: Record<string, RegExp> = {
    "": /empty/,
    "IP Virtual Server version 1.2.1 (size=4096)\n": /ends inside its header/,
    "hello\n": /line 1: not the IPVS table header/,
    "IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> x\n":
      /line 3: not the IPVS table header/,
    [good.replace("TCP  0A600001:01BB rr", "TCP  0A6000")]: /neither a virtual server nor a real server/,
    [good.replace(/ {2}-> AC120004:192B .*\n/, "  -> AC1200\n")]: /not a real server line/,
    [good.replace(/(Flags\n.*InActConn\n)/, "$1  -> 0AF40002:0035      Masq    1      0          0\n")]:
      /a real server before any virtual server/,
    [good.replace(/\n(TCP|UDP)/, "\n\n$1")]: /text after a blank line/,
    [good.replace("rr  \n", "rr  persistent 600\n")]: /persistent without its timeout and netmask/,
    "\u0000\u0001\u0002\n": /not the IPVS table header/,
  };
  for (const [text, why] of Object.entries(bad)) {
    const r = parseIpvsProc(text);
    t.equal(r.ok, false, JSON.stringify(text.slice(0, 60)));
    if (!r.ok) t.match(r.error, why);
  }
  // A file cut anywhere gives a value or an error naming the file; it never throws. (A cut inside a
  // line is not always visible: "rr" cut to "r" is still a well-formed line.)
  const full = parseIpvsProc(good);
  fc.assert(
    fc.property(fc.integer({ min: 0, max: good.length }), (cut) => {
      const r = parseIpvsProc(good.slice(0, cut));
      if (!r.ok) return /ip_vs/.test(r.error);
      return full.ok && r.value.virtualServers.length <= full.value.virtualServers.length;
    }),
  );
});

t.test("ipvsadm -L --timeout: default, changed and partly changed timeouts", async (t) => {
  t.same(parseIpvsadmTimeout(fixture("empty/ipvsadm-L-timeout.txt")), {
    ok: true,
    value: { tcp: 900, tcpFin: 120, udp: 300 },
  });
  t.same(parseIpvsadmTimeout(fixture("kube-small/ipvsadm-L-timeout.txt")), {
    ok: true,
    value: { tcp: 7200, tcpFin: 30, udp: 60 },
  });
  t.same(parseIpvsadmTimeout(fixture("schedulers/ipvsadm-L-timeout.txt")), {
    ok: true,
    value: { tcp: 900, tcpFin: 120, udp: 45 },
  });
  for (const bad of [
    fixture("not-loaded/ipvsadm-L-timeout.txt"), // empty: ipvsadm said it on stderr
    "Timeout (tcp tcpfin udp): 900 120\n",
    "Timeout (tcp tcpfin udp): 900 120 300\nTimeout (tcp tcpfin udp): 900 120 300\n",
    fixture("kube-small/ipvsadm-L-n.txt"),
  ]) {
    t.equal(parseIpvsadmTimeout(bad).ok, false, JSON.stringify(bad.slice(0, 40)));
  }
});
