import { symlinkSync, mkdirSync } from "node:fs";
import { createServer, type Server } from "node:net";
import t from "tap";
import { listenersProbe } from "../../../agent/probes/listeners.js";
import type { IpsetFacts } from "../../../agent/facts/ipvs.js";
import { fixture, probeContext, tree } from "../../helpers/probe-context.js";

// kube-proxy's listening sockets, read the way `ss -ltnp` does, in the kernel's formats
// (net/ipv4/tcp_ipv4.c get_tcp4_sock, net/ipv6/tcp_ipv6.c, nf_conntrack_standalone.c ct_seq_show).
const HEAD =
  "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
const sock = (n: number, addr: string, port: number, inode: number, st = "0A") =>
  `   ${n}: ${addr}:${port.toString(16).toUpperCase().padStart(4, "0")} ${"0".repeat(addr.length)}:0000 ${st} 00000000:00000000 00:00000000 00000000     0        0 ${inode} 1 0000000000000000 100 0 0 10 0\n`;
const TCP = HEAD + sock(0, "0100007F", 10249, 41234) + sock(1, "0B04A8C0", 22, 41000);
const TCP6 = HEAD + sock(0, "0".repeat(32), 10256, 51230) + sock(1, "0".repeat(32), 31234, 51234);
const CONNTRACK = [
  "ipv4     2 tcp      6 117 TIME_WAIT src=10.0.0.9 dst=10.0.0.5 sport=51234 dport=31234 src=10.0.0.5 dst=10.0.0.9 sport=31234 dport=51234 [ASSURED] mark=0 zone=0 use=2",
  "ipv4     2 tcp      6 118 TIME_WAIT src=10.0.0.9 dst=10.0.0.5 sport=51236 dport=31234 src=10.0.0.5 dst=10.0.0.9 sport=31234 dport=51236 [ASSURED] mark=0 zone=0 use=2",
  "ipv4     2 tcp      6 86399 ESTABLISHED src=192.168.4.1 dst=192.168.4.11 sport=40000 dport=22 src=192.168.4.11 dst=192.168.4.1 sport=22 dport=40000 [ASSURED] mark=0 zone=0 use=2",
  "",
].join("\n");
const ipsets = (ports: number[] | null): IpsetFacts => ({
  available: true,
  sets: [
    {
      name: "KUBE-HEALTH-CHECK-NODE-PORT",
      type: "bitmap:port",
      family: null,
      entries: ports?.length ?? 1,
      references: 1,
      kubeProxy: true,
    },
  ],
  nodePorts: [],
  healthCheckNodePorts: ports,
});
// kube-proxy's default addresses, its health server on every address.
const DEFAULTS = { metricsUrl: "http://127.0.0.1:10249", healthUrl: "http://0.0.0.0:10256" };
const ctx = (proc: string, ports: number[] | null) =>
  probeContext({
    procRoot: proc,
    prior: { ipsets: { ok: true, facts: ipsets(ports) } },
  });

t.test("ports from ipvs mode's set, connections to them by destination", async (t) => {
  const proc = tree(t, { net: { tcp: TCP, tcp6: TCP6, nf_conntrack: CONNTRACK } });
  const r = await listenersProbe.run(ctx(proc, [31234]), DEFAULTS);
  t.ok(r.ok);
  if (!r.ok) return;
  t.same(r.facts.healthCheckPorts, { known: true, ports: [31234], source: "ipset" });
  t.same(r.facts.conntrack, { read: true, to: [{ address: "10.0.0.5", port: 31234, connections: 2 }] });
  t.same(
    r.facts.tcp.map((s) => `${s.address}:${s.port}`),
    ["127.0.0.1:10249", "192.168.4.11:22", ":::10256", ":::31234"],
  );
  t.equal(r.facts.kubeProxyProcess.traced, false, "no process dirs in this tree");
});

t.test("kube-proxy's process traced through its metrics socket: its other ports", async (t) => {
  const proc = tree(t, { net: { tcp: TCP, tcp6: TCP6, nf_conntrack: CONNTRACK } });
  mkdirSync(`${proc}/4242/fd`, { recursive: true });
  for (const [fd, inode] of [
    [3, 41234],
    [4, 51230],
    [5, 51234],
  ])
    symlinkSync(`socket:[${inode}]`, `${proc}/4242/fd/${fd}`);
  mkdirSync(`${proc}/77/fd`, { recursive: true });
  symlinkSync("socket:[41000]", `${proc}/77/fd/3`);
  const r = await listenersProbe.run(probeContext({ procRoot: proc }), DEFAULTS);
  t.ok(r.ok);
  if (!r.ok) return;
  t.same(r.facts.kubeProxyProcess, { traced: true, pid: 4242 });
  t.same(r.facts.healthCheckPorts, { known: true, ports: [31234], source: "kube-proxy-sockets" });
  t.same(
    r.facts.tcp.map((s) => s.kubeProxy),
    [true, false, true, true],
  );
});

t.test("the recorded tables: the metrics socket and a dual-stack health-check listener", async (t) => {
  const r = await listenersProbe.run(ctx(fixture("host-sockets/proc"), [31234]), DEFAULTS);
  t.ok(r.ok);
  if (!r.ok) return;
  t.same(
    r.facts.tcp.map((s) => `${s.family} ${s.address}:${s.port}`),
    ["inet 127.0.0.1:10249", "inet6 :::31234"],
  );
  t.equal(r.facts.conntrack.read, false, "no nf_conntrack recorded: not read, never 0 connections");
  t.match(!r.facts.conntrack.read && r.facts.conntrack.why, /nf_conntrack/);
});

t.test("unread is never none", async (t) => {
  const noConntrack = tree(t, { net: { tcp: TCP, tcp6: TCP6 } });
  const r = await listenersProbe.run(ctx(noConntrack, [31234]), DEFAULTS);
  t.ok(r.ok && !r.facts.conntrack.read, "no nf_conntrack procfs: connections not read");
  t.match(r.ok && !r.facts.conntrack.read && r.facts.conntrack.why, /nf_conntrack/);
  const setUnread = await listenersProbe.run(ctx(noConntrack, null), DEFAULTS);
  t.ok(
    setUnread.ok && !setUnread.facts.healthCheckPorts.known,
    "set not listed, process not traced: not known",
  );
  const noTcp = tree(t, { net: { tcp6: TCP6 } });
  const f = await listenersProbe.run(ctx(noTcp, [31234]), DEFAULTS);
  t.equal(!f.ok && f.error.kind, "io", "no /proc/net/tcp: the probe fails, named");
  const garbage = tree(t, { net: { tcp: "<html>\n", tcp6: TCP6 } });
  const g = await listenersProbe.run(ctx(garbage, [31234]), DEFAULTS);
  t.equal(!g.ok && g.error.kind, "garbage");
});

t.test("real sockets: this process, as kube-proxy, traced through /proc", async (t) => {
  const listen = (host: string) =>
    new Promise<Server>((ok) => {
      const s = createServer();
      s.listen(0, host, () => ok(s));
    });
  const metrics = await listen("127.0.0.1");
  const hc = await listen("0.0.0.0");
  t.teardown(() => {
    metrics.close();
    hc.close();
  });
  const port = (s: Server) => (s.address() as { port: number }).port;
  const r = await listenersProbe.run(probeContext({ procRoot: "/proc" }), {
    metricsUrl: `http://127.0.0.1:${port(metrics)}`,
    healthUrl: "http://127.0.0.1:1",
  });
  t.ok(r.ok);
  if (!r.ok) return;
  t.same(r.facts.kubeProxyProcess, { traced: true, pid: process.pid });
  t.ok(r.facts.healthCheckPorts.known && r.facts.healthCheckPorts.ports.includes(port(hc)));
  t.ok(r.facts.tcp.some((s) => s.port === port(hc) && s.address === "0.0.0.0" && s.kubeProxy === true));
});

t.test("kube-proxy's process is the one holding the socket its metrics URL reaches", async (t) => {
  // Another process listens on the same port on the node address, and comes first in the table.
  const other = HEAD + sock(0, "0500000A", 10249, 41500) + sock(1, "0100007F", 10249, 41234);
  const proc = tree(t, { net: { tcp: other, tcp6: TCP6 } });
  mkdirSync(`${proc}/77/fd`, { recursive: true });
  symlinkSync("socket:[41500]", `${proc}/77/fd/3`);
  mkdirSync(`${proc}/4242/fd`, { recursive: true });
  symlinkSync("socket:[41234]", `${proc}/4242/fd/3`);
  symlinkSync("socket:[51234]", `${proc}/4242/fd/4`);
  const r = await listenersProbe.run(ctx(proc, [31234]), DEFAULTS);
  t.same(r.ok && r.facts.kubeProxyProcess, { traced: true, pid: 4242 });
  t.same(r.ok && r.facts.tcp.map((s) => `${s.address}:${s.port} ${s.kubeProxy}`), [
    "10.0.0.5:10249 false",
    "127.0.0.1:10249 true",
    ":::10256 false",
    ":::31234 true",
  ]);

  // Two processes on sockets the URL may reach (127.0.0.1 and the IPv6 wildcard): which one answered
  // is not known, so neither is taken for kube-proxy.
  const both = HEAD + sock(0, "0100007F", 10249, 41234);
  const proc2 = tree(t, { net: { tcp: both, tcp6: HEAD + sock(0, "0".repeat(32), 10249, 51500) } });
  mkdirSync(`${proc2}/77/fd`, { recursive: true });
  symlinkSync("socket:[51500]", `${proc2}/77/fd/3`);
  mkdirSync(`${proc2}/4242/fd`, { recursive: true });
  symlinkSync("socket:[41234]", `${proc2}/4242/fd/3`);
  const r2 = await listenersProbe.run(ctx(proc2, [31234]), DEFAULTS);
  t.equal(r2.ok && r2.facts.kubeProxyProcess.traced, false);
  t.match(r2.ok && !r2.facts.kubeProxyProcess.traced && r2.facts.kubeProxyProcess.why, /pids 77, 4242/);
});

t.test(
  "a busy node's socket table (every connection is a line: over 64 MiB) is read, streamed",
  async (t) => {
    // 560,000 established sockets, then kube-proxy's metrics listener last.
    const established = sock(1, "0B04A8C0", 40000, 41299, "01");
    const big = HEAD + established.repeat(560_000) + sock(2, "0100007F", 10249, 41234);
    t.ok(big.length > 64 * 1024 * 1024, "over the cap a whole-file read had");
    const proc = tree(t, { net: { tcp: big, tcp6: TCP6 } });
    const r = await listenersProbe.run(ctx(proc, [31234]), DEFAULTS);
    t.same(r.ok ? r.facts.tcp.map((s) => `${s.address}:${s.port}`) : r.error, [
      "127.0.0.1:10249",
      ":::10256",
      ":::31234",
    ]);
  },
);

t.test("a conntrack table with a line that is no entry is not read, never 0 connections", async (t) => {
  for (const text of ["<html>\n", CONNTRACK.replace("ipv4     2 tcp", "ipv4 two tcp")]) {
    const proc = tree(t, { net: { tcp: TCP, tcp6: TCP6, nf_conntrack: text } });
    const r = await listenersProbe.run(ctx(proc, [31234]), DEFAULTS);
    t.equal(r.ok && r.facts.conntrack.read, false);
    t.match(r.ok && !r.facts.conntrack.read && r.facts.conntrack.why, /nf_conntrack line \d+/);
  }
  // An ICMP entry has no ports: an entry, not counted, not an error.
  const icmp =
    "ipv4     2 icmp     1 29 src=10.0.0.9 dst=10.0.0.5 type=8 code=0 id=7 src=10.0.0.5 dst=10.0.0.9 type=0 code=0 id=7 mark=0 use=1\n";
  const proc = tree(t, { net: { tcp: TCP, tcp6: TCP6, nf_conntrack: CONNTRACK + icmp } });
  const r = await listenersProbe.run(ctx(proc, [31234]), DEFAULTS);
  t.same(r.ok && r.facts.conntrack, {
    read: true,
    to: [{ address: "10.0.0.5", port: 31234, connections: 2 }],
  });
});
