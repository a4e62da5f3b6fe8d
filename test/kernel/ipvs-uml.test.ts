import t from "tap";
import { staleBuild } from "../helpers/built.js";
import { readFileSync } from "node:fs";
import { IpsetFacts, IpvsFacts, KubeIpvs0Facts } from "../../agent/facts/ipvs.js";
import { bootUml, hostScratchDir, umlRunsHere, umlUnavailableReason } from "../helpers/uml.js";

// A loaded 2-core machine (load 8-17) slows a UML guest several times over: its deadline and this
// file's (tap's default is 600 s) leave room for that; a guest that hangs is still killed.
t.setTimeout(1_200_000);

// One UML boot: real IPVS services, a real kube-ipvs0 and real ipsets in one network namespace (as
// kube-proxy's ipvs mode leaves a node), nothing in another; the three probes run inside the guest
// from dist/ with the real tools, and their facts are checked here.

const GUEST = `
set -eu
. test/helpers/uml/guest-lib.sh
in1() { ip netns exec node1 "$@"; }

proxyscope_netns node1
ip -n node1 link add eth0 type dummy
ip -n node1 addr add 172.18.0.10/16 dev eth0
ip -n node1 link set eth0 up
ip -n node1 link add kube-ipvs0 type dummy
ip -n node1 addr add 10.96.0.1/32 dev kube-ipvs0
ip -n node1 addr add 10.96.0.10/32 dev kube-ipvs0
ip -n node1 -6 addr add fd00:10:96::1/128 dev kube-ipvs0 nodad
in1 ipvsadm -A -t 10.96.0.1:443 -s rr
for rs in 172.18.0.2 172.18.0.3 172.18.0.4; do in1 ipvsadm -a -t 10.96.0.1:443 -r $rs:6443 -m -w 1; done
in1 ipvsadm -A -u 10.96.0.10:53 -s rr
for rs in 10.244.0.2 10.244.1.3; do in1 ipvsadm -a -u 10.96.0.10:53 -r $rs:53 -m -w 1; done
in1 ipvsadm -A -t [fd00:10:96::1]:443 -s rr
in1 ipvsadm -a -t [fd00:10:96::1]:443 -r [fd00:10:244:1::2]:6443 -m -w 1
in1 ipvsadm -A -t 172.18.0.10:30080 -s lc -p 600
in1 ipvsadm -a -t 172.18.0.10:30080 -r 10.244.1.5:8080 -m -w 3
in1 ipvsadm --set 7200 30 60
in1 ipset create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536
in1 ipset add KUBE-CLUSTER-IP 10.96.0.1,tcp:443
in1 ipset add KUBE-CLUSTER-IP 10.96.0.10,udp:53
in1 ipset create KUBE-6-CLUSTER-IP hash:ip,port family inet6 hashsize 1024 maxelem 65536
in1 ipset add KUBE-6-CLUSTER-IP fd00:10:96::1,tcp:443
in1 ipset create KUBE-NODE-PORT-TCP bitmap:port range 0-65535
in1 ipset add KUBE-NODE-PORT-TCP 30080
in1 ipset create KUBE-6-LOAD-BALANCER-SOURCE-CID hash:ip,port,net family inet6 hashsize 1024 maxelem 65536
in1 ipset create f2b-sshd hash:ip
in1 node test/kernel/ipvs-driver.mjs "$OUT/node1.json"

proxyscope_netns node2
ip netns exec node2 node test/kernel/ipvs-driver.mjs "$OUT/node2.json"
echo guest done
`;

const reason = umlUnavailableReason();
if (reason !== null) {
  t.fail(`User-Mode Linux is needed for this test and does not skip silently: ${reason}`);
} else if (umlRunsHere(t)) {
  const stale = staleBuild(["agent/probes/ipvs.ts", "agent/probes/kube-ipvs0.ts", "agent/probes/ipsets.ts"]);
  t.equal(stale, null, "dist/ is built and current");

  const out = hostScratchDir("proxyscope-ipvs-uml-");
  t.teardown(out.remove);
  const boot = await bootUml({ script: GUEST, env: { OUT: out.path }, timeoutMs: 900_000 });
  t.equal(boot.exitCode, 0, `guest script:\n${boot.output}`);
  t.same(boot.modulesFailed, [], "every module loaded");
  const read = (n: string) => JSON.parse(readFileSync(`${out.path}/${n}.json`, "utf8"));

  t.test("a node in ipvs mode", async (t) => {
    const r = read("node1");
    t.ok(r.ipvs.ok, JSON.stringify(r.ipvs.error));
    const ipvs = IpvsFacts.parse(r.ipvs.facts);
    t.match(ipvs, {
      available: true,
      virtualServerCount: 4,
      realServerCount: 7,
      schedulers: { rr: 3, lc: 1 },
      timeouts: { tcp: 7200, tcpFin: 30, udp: 60 },
    });
    t.equal(ipvs.timeoutsError, undefined);
    // The real kernel's /proc/net/ip_vs_stats of this namespace: read, whatever traffic it saw.
    t.equal(ipvs.statsError, undefined, "ip_vs_stats read");
    t.ok(ipvs.stats && Number.isInteger(ipvs.stats.connections), JSON.stringify(ipvs.stats));
    const vs = (p: string, a: string, port: number) =>
      ipvs.virtualServers.find((v) => v.protocol === p && v.address === a && v.port === port);
    t.same(vs("TCP", "fd00:10:96::1", 443), {
      protocol: "TCP",
      family: "inet6",
      address: "fd00:10:96::1",
      port: 443,
      fwmark: null,
      scheduler: "rr",
      flags: [],
      persistentTimeoutJiffies: null,
      realServers: 1,
      activeConns: 0,
      inactiveConns: 0,
    });
    t.match(vs("UDP", "10.96.0.10", 53), { family: "inet", realServers: 2 });
    t.match(vs("TCP", "172.18.0.10", 30080), {
      scheduler: "lc",
      flags: ["persistent"],
      persistentTimeoutJiffies: 600 * 100, // jiffies: UML's kernel has HZ=100
      realServers: 1,
    });

    t.ok(r["kube-ipvs0"].ok, JSON.stringify(r["kube-ipvs0"].error));
    const link = KubeIpvs0Facts.parse(r["kube-ipvs0"].facts);
    t.match(link, { present: true, kind: "dummy", operState: "DOWN" });
    t.same(link.addresses.map((a) => `${a.address}/${a.prefixLen}`).sort(), [
      "10.96.0.1/32",
      "10.96.0.10/32",
      "fd00:10:96::1/128",
    ]);
    // Every ClusterIP virtual server's address is on kube-ipvs0, written the same way.
    const bound = new Set(link.addresses.map((a) => a.address));
    t.same(
      ipvs.virtualServers.filter((v) => v.port !== 30080 && !bound.has(v.address ?? "")),
      [],
    );

    t.ok(r.ipsets.ok, JSON.stringify(r.ipsets.error));
    const sets = IpsetFacts.parse(r.ipsets.facts);
    t.equal(sets.available, true);
    t.same(
      sets.sets.map((s) => [s.name, s.type, s.family, s.entries, s.kubeProxy]),
      [
        ["KUBE-CLUSTER-IP", "hash:ip,port", "inet", 2, true],
        ["KUBE-6-CLUSTER-IP", "hash:ip,port", "inet6", 1, true],
        ["KUBE-NODE-PORT-TCP", "bitmap:port", null, 1, true],
        ["KUBE-6-LOAD-BALANCER-SOURCE-CID", "hash:ip,port,net", "inet6", 0, true],
        ["f2b-sshd", "hash:ip", "inet", 0, false],
      ],
    );
  });

  t.test("a namespace with nothing: no services, no kube-ipvs0, no sets", async (t) => {
    const r = read("node2");
    t.same(r.ipvs, {
      ok: true,
      facts: {
        available: true,
        virtualServerCount: 0,
        realServerCount: 0,
        schedulers: {},
        virtualServers: [],
        timeouts: { tcp: 900, tcpFin: 120, udp: 300 },
        // This namespace's own totals: nothing has gone through IPVS here.
        stats: { connections: 0, incomingPackets: 0, outgoingPackets: 0, incomingBytes: 0, outgoingBytes: 0 },
      },
    });
    t.same(r["kube-ipvs0"], {
      ok: true,
      facts: { present: false, kind: null, operState: null, flags: [], addresses: [] },
    });
    // No KUBE-NODE-PORT-*, KUBE-HEALTH-CHECK-NODE-PORT or -LOCAL set here: no NodePort, no health-check
    // port and no ETP Local destination learned from the node (none, read: not unread).
    t.same(r.ipsets, {
      ok: true,
      facts: {
        available: true,
        sets: [],
        nodePorts: [],
        healthCheckNodePorts: [],
        etpLocal: { addresses: [], nodePorts: [] },
      },
    });
  });
}
