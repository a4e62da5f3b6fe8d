import { spawnSync } from "node:child_process";
import t from "tap";
import { NetNs, netnsAvailable, withNetns } from "../helpers/netns.js";
import { finding } from "../helpers/scan-report.js";
import { scanInNetns } from "../helpers/standin.js";
import { agentBuilt } from "../e2e/agent-process.js";

// etp-local-in-cluster-callers and service-ips-host-ports-close on real kernel state: a "node" namespace
// (10.20.0.5 on eth0, the default route's) whose kube-ipvs0 link holds a ClusterIP 10.96.0.10 and an
// externalTrafficPolicy: Local LoadBalancer IP 203.0.113.10, ipvs mode's KUBE-LOAD-BALANCER-LOCAL set
// naming 203.0.113.10,tcp:8443, no KUBE-IPVS-FILTER in its (empty) iptables, conntrack active (a rule
// using ct, as kube-proxy's own rules do), and a "pod" namespace 10.244.1.7 (inside the stand-in's
// clusterCIDR 10.244.0.0/16) wired to it by a veth. The kube-proxy STAND-IN answers ipvs mode, v1.24.17.
// This host has no dummy or IPVS module, so kube-ipvs0 is a veth and a listener on 0.0.0.0:8443 stands
// for the LB IP's virtual server: the conntrack entry's original direction (pod -> 203.0.113.10:8443) is
// what IPVS's own flow shows with net.ipv4.vs.conntrack=1. The traffic is real, so are the entries.
// What an SRE expects: the pod calling the ETP Local LB IP is named (a warning: nftables mode spreads it);
// the pod pinging the ClusterIP and reaching a host port through it blocks (nftables rejects both);
// the same node with no such traffic: no ETP line, and the missing filter only a warning.

t.setTimeout(1_800_000);
const python = spawnSync("python3", ["-c", "pass"]).status === 0;
const skip =
  (!agentBuilt() && "run npm run build first (the agent and the stand-in run from dist/)") ||
  (!netnsAvailable() && "network namespaces need root") ||
  (!python && "python3 sends the ICMP echo (no ping on this host)");

const SCENARIO = { mode: "ipvs", version: "v1.24.17", lastSync: { agoSeconds: 3 }, healthy: true };

function node(ns: NetNs, pod: NetNs): void {
  ns.must(["ip", "link", "set", "lo", "up"]);
  ns.must(["ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth0-peer"]);
  ns.must(["ip", "addr", "add", "10.20.0.5/24", "dev", "eth0"]);
  for (const dev of ["eth0-peer", "eth0"]) ns.must(["ip", "link", "set", dev, "up"]);
  ns.must(["ip", "route", "add", "default", "via", "10.20.0.1", "dev", "eth0", "src", "10.20.0.5"]);
  // kube-ipvs0 as ipvs mode makes it, but a veth (no dummy module here): Service IPs as /32 local addresses.
  ns.must(["ip", "link", "add", "kube-ipvs0", "type", "veth", "peer", "name", "kube-ipvs0-peer"]);
  for (const a of ["10.96.0.10/32", "203.0.113.10/32"])
    ns.must(["ip", "addr", "add", a, "dev", "kube-ipvs0"]);
  for (const dev of ["kube-ipvs0-peer", "kube-ipvs0"]) ns.must(["ip", "link", "set", dev, "up"]);
  // The pod: its own namespace behind a veth, as a CNI wires one.
  ns.must(["ip", "link", "add", "cali0", "type", "veth", "peer", "name", "eth0", "netns", pod.name]);
  ns.must(["ip", "link", "set", "cali0", "up"]);
  ns.must(["ip", "route", "add", "10.244.1.7/32", "dev", "cali0"]);
  pod.must(["ip", "link", "set", "lo", "up"]);
  pod.must(["ip", "addr", "add", "10.244.1.7/32", "dev", "eth0"]);
  pod.must(["ip", "link", "set", "eth0", "up"]);
  pod.must(["ip", "route", "add", "10.20.0.5/32", "dev", "eth0"]);
  pod.must(["ip", "route", "add", "default", "via", "10.20.0.5", "dev", "eth0", "onlink"]);
  ns.must(["sysctl", "-qw", "net.ipv4.conf.cali0.proxy_arp=1"]);
  ns.ipsetRestore(
    'create KUBE-LOAD-BALANCER-LOCAL hash:ip,port family inet hashsize 1024 maxelem 65536 comment\nadd KUBE-LOAD-BALANCER-LOCAL 203.0.113.10,tcp:8443 comment "web/shop:https"\n',
  );
  ns.loadNft(
    "add table inet proxyscope-test\nadd chain inet proxyscope-test in { type filter hook input priority 0 ; }\nadd rule inet proxyscope-test in ct state established,related accept\n",
  );
}

// Listens on 0.0.0.0 for each port (a host service, and the LB IP's virtual server), then prints "ready".
const SERVE = `const net = require("net"); let n = 0; const ports = process.argv.slice(1).map(Number);
for (const p of ports) net.createServer((s) => s.end()).listen(p, "0.0.0.0", () => { if (++n === ports.length) console.log("ready"); });`;
// Connects to each address:port from this namespace and closes; exits 0 when every one connected.
const CONNECT = `const net = require("net"); const ts = process.argv.slice(1); let left = ts.length;
for (const x of ts) { const [h, p] = x.split(":"); net.connect(Number(p), h).on("connect", function () { this.end(); if (--left === 0) process.exit(0); }).on("error", (e) => { console.error(x, e.message); process.exit(1); }); }`;
// One ICMP echo to argv[1], waiting for the reply (raw socket: root in the pod namespace).
const PING = `import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); s.settimeout(60)
h = struct.pack("!BBHHH", 8, 0, 0, 77, 1); c = sum(struct.unpack("!4H", h)); c = ~((c >> 16) + (c & 0xffff)) & 0xffff
s.sendto(struct.pack("!BBHHH", 8, 0, c, 77, 1), (sys.argv[1], 0))
while True:
    d, a = s.recvfrom(1024)
    if a[0] == sys.argv[1] and d[20] == 0: break`;

async function withNode(body: (ns: NetNs, pod: NetNs) => Promise<void>): Promise<void> {
  await withNetns(async (ns) => {
    const pod = NetNs.create();
    const children: import("node:child_process").ChildProcess[] = [];
    try {
      node(ns, pod);
      await ns.start([process.execPath, "-e", SERVE, "2222", "8443"], children);
      await body(ns, pod);
    } finally {
      for (const c of children) {
        if (c.exitCode === null) {
          const gone = new Promise((r) => c.once("exit", r));
          c.kill("SIGTERM");
          await gone;
        }
      }
      pod.destroy();
    }
  });
}

t.test(
  "a pod calls the ETP Local LB IP, pings the ClusterIP and reaches a host port through it",
  { skip },
  (t) =>
    withNode(async (ns, pod) => {
      const c = pod.exec([
        process.execPath,
        "-e",
        CONNECT,
        "203.0.113.10:8443",
        "203.0.113.10:8443",
        "10.96.0.10:2222",
      ]);
      t.equal(c.code, 0, `the pod's connections: ${c.stderr}`);
      const p = pod.exec(["python3", "-c", PING, "10.96.0.10"]);
      t.equal(p.code, 0, `the pod's ping: ${p.stderr}`);
      const r = await scanInNetns(ns, SCENARIO, [], "etp");
      t.equal(r.phase, "ipvs");
      const etp = finding(r, "etp-local-in-cluster-callers");
      t.equal(etp?.severity, "warning");
      t.same(etp?.evidence.connections, ["TCP 203.0.113.10:8443 (2 connections)"]);
      t.equal(etp?.evidence.inside, "node addresses, clusterCIDR 10.244.0.0/16");
      const svc = finding(r, "service-ips-host-ports-close");
      t.equal(svc?.severity, "error");
      t.equal(svc?.blocksMigration, true);
      t.same(svc?.evidence.flowsToServiceIps, [
        "10.96.0.10 ICMP (1 connections)",
        "10.96.0.10 TCP :2222 (1 connections)",
      ]);
      t.equal(svc?.evidence.kubeIpvsFilter, "absent (ipv4 legacy, ipv4 nft read)");
      t.equal(r.verdict, "blocked");
    }),
);

t.test("the same node with no such traffic: no ETP line, the missing filter a warning", { skip }, (t) =>
  withNode(async (ns) => {
    const r = await scanInNetns(ns, SCENARIO, [], "quiet");
    t.notOk(finding(r, "etp-local-in-cluster-callers"));
    t.same(r.facts.serviceConntrack?.etpLocalFromInside, {
      read: true,
      inside: "node addresses, clusterCIDR 10.244.0.0/16",
      to: [],
      destinations: 0,
    });
    const svc = finding(r, "service-ips-host-ports-close");
    t.equal(svc?.severity, "warning");
    t.same(svc?.evidence.flowsToServiceIps, []);
  }),
);
