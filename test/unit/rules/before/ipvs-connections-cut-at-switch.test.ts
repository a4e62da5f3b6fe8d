import t from "tap";
import { addresses, ids, ipvsNode, judge, kernel, nftNode, NOW } from "../../../helpers/rules.js";
import { recordedConnFacts, recordedConnNode } from "../../../helpers/recorded-conn-node.js";

const ID = "ipvs-connections-cut-at-switch";

t.test("live connections through kube-proxy's virtual servers: drain first, N named", async (t) => {
  const j = judge(recordedConnNode(), new Map(), NOW);
  const f = j.findings.find((x) => x.id === ID);
  if (f === undefined) return t.fail(`no ${ID}: ${ids(j).join(", ")}`);
  t.match(f, { severity: "warning", stage: "before", blocksMigration: false });
  // 3 to 10.96.143.30:80, 1 to [fd00:10:96::1e]:80, 1 to 10.96.143.31:8443, 2 to the NodePort; the
  // keepalived-style VIP's connection (192.168.50.100:80) is not kube-proxy's and not counted here.
  t.equal(f.evidence.established, 7);
  t.equal(f.evidence.closingOrUdp, 3, "2 TIME_WAIT and 1 UDP flow through kube-proxy's, the template not");
  t.same(f.evidence.top, [
    "TCP 10.96.143.30:80 (Service IP): 3 established, 2 other",
    "TCP 172.18.0.10:30080 (NodePort): 2 established",
    "TCP 10.96.143.31:8443 (Service IP): 1 established",
    "TCP [fd00:10:96::1e]:80 (Service IP): 1 established",
    "UDP 10.96.0.10:53 (Service IP): 1 other",
  ]);
  t.match(f.title, /7 established connections/);
  t.match(f.remedy, /kubectl drain/);
  t.match(f.remedy, /7 connections would be cut/);
  t.equal(j.verdict, "blocked", "the keepalived-style VIP blocks this recording on its own");
});

t.test("the verdict: attention (not ready, not blocked) while connections would be cut", async (t) => {
  // The recording without the VIP that is no Service (and its address): only kube-proxy's state is left.
  const rec = recordedConnFacts();
  const ipvs = rec.ipvs!;
  const own = ipvs.virtualServers.filter((v) => v.address !== "192.168.50.100");
  const node = (over = {}) =>
    recordedConnNode({
      ipvs: { ...ipvs, virtualServers: own, virtualServerCount: own.length, schedulers: { rr: own.length } },
      addresses: addresses("172.18.0.10"),
      ...over,
    });
  const j = judge(node(), new Map(), NOW);
  t.same(
    j.findings.filter((f) => f.severity !== "info").map((f) => f.id),
    [ID],
    "nothing else in the way",
  );
  t.equal(j.verdict, "attention");
  const drained = rec.ipvsConnections!.byVirtualAddress.map((v) => ({ ...v, established: 0 }));
  const after = judge(
    node({ ipvsConnections: { ...rec.ipvsConnections!, established: 0, byVirtualAddress: drained } }),
    new Map(),
    NOW,
  );
  t.equal(after.verdict, "ready", "drained: ready");
});

t.test("only closing entries and UDP flows: nothing to drain", async (t) => {
  const live = recordedConnFacts();
  const conns = live.ipvsConnections!;
  const quiet = {
    ...conns,
    established: 0,
    states: { TIME_WAIT: 2 },
    byVirtualAddress: conns.byVirtualAddress.map((v) => ({
      ...v,
      other: v.other + v.established,
      established: 0,
    })),
  };
  t.notOk(ids(judge(recordedConnNode({ ipvsConnections: quiet }), new Map(), NOW)).includes(ID));
});

t.test("the idle recording (IPVS loaded, no connection ever made): no finding", async (t) => {
  const idle = recordedConnFacts("idle");
  t.notOk(ids(judge(ipvsNode({ ipvsConnections: idle.ipvsConnections }), new Map(), NOW)).includes(ID));
});

t.test("unread is never zero: a failed read leaves the node not ready, and says why", async (t) => {
  const failed = new Map([
    [
      "ipvs-connections",
      { kind: "output-cap" as const, message: "/proc/net/ip_vs_conn is larger than 268435456 bytes" },
    ],
  ]);
  const j = judge(recordedConnNode({ ipvsConnections: null }), failed, NOW);
  t.notOk(ids(j).includes(ID), "no count is claimed");
  t.ok(ids(j).includes("scan-incomplete"));
  t.not(j.verdict, "ready");
  // Without kube-ipvs0 nobody knows which virtual servers are kube-proxy's: no count, not 0.
  const noIpvs0 = judge(
    recordedConnNode({ kubeIpvs0: null }),
    new Map([["kube-ipvs0", { kind: "timeout" as const, message: "ip timed out" }]]),
    NOW,
  );
  t.notOk(ids(noIpvs0).includes(ID));
  t.not(noIpvs0.verdict, "ready");
  t.equal(noIpvs0.view.ipvsConnections, null);
});

t.test("after the switch it is not raised (the connections are gone or through nftables)", async (t) => {
  t.notOk(ids(judge(nftNode(recordedConnFacts()), new Map(), NOW)).includes(ID));
});

t.test(
  "a report cuts the per-address list; the carried view keeps the full count, a rebuilt one says unread",
  async (t) => {
    const { reportOf } = await import("../../../helpers/reports.js");
    const { viewOfReport } = await import("../../../../agent/view/summary.js");
    const rec = recordedConnFacts();
    // 300 more ClusterIPs on kube-ipvs0, each with one connection: more than the report keeps.
    const extra = Array.from({ length: 300 }, (_, i) => `10.97.${i >> 8}.${(i & 255) + 1}`);
    const { vs } = await import("../../../helpers/facts.js");
    const ipvs = rec.ipvs!;
    const virtualServers = [...ipvs.virtualServers, ...extra.map((a) => vs(a, 80))];
    const byVirtualAddress = [
      ...rec.ipvsConnections!.byVirtualAddress,
      ...extra.map((address) => ({
        protocol: "TCP" as const,
        family: "inet" as const,
        address,
        port: 80,
        established: 1,
        other: 0,
      })),
    ];
    const r = reportOf(
      recordedConnNode({
        ipvs: { ...ipvs, virtualServers, virtualServerCount: virtualServers.length },
        ipvsConnections: {
          ...rec.ipvsConnections!,
          established: rec.ipvsConnections!.established + 300,
          byVirtualAddress,
          virtualAddressCount: byVirtualAddress.length,
        },
        kubeIpvs0: {
          ...rec.kubeIpvs0!,
          addresses: [
            ...rec.kubeIpvs0!.addresses,
            ...extra.map((address) => ({ family: "inet" as const, address, prefixLen: 32 })),
          ],
        },
      }),
    );
    t.equal(r.truncated["facts.ipvsConnections.byVirtualAddress"], 306);
    t.equal(r.view?.ipvsConnections?.established, 307);
    t.equal(r.view?.ipvsConnections?.top.length, 10, "the report lists the top 10 only");
    t.equal(r.findings.find((f) => f.id === ID)?.evidence.established, 307);
    t.equal(viewOfReport(r).ipvsConnections, null, "rebuilt from cut lists: not read, never a smaller count");
  },
);

// Below kernel 5.13 the next mode is iptables, and kube-proxy flushes IPVS only when it starts in a mode that
// is not iptables-based (cmd/kube-proxy/app/server_linux.go platformCleanup: `if !isIPTablesBased(mode) ||
// cleanupAndExit`): that switch leaves IPVS and its connections alone. Expected: no "cut by the switch"
// claim; a kernel not read is not old, and the finding stands.
t.test("a kernel below 5.13 (its next mode is iptables): the switch flushes nothing", async (t) => {
  const old = judge(recordedConnNode({ kernel: kernel("5.4.0-216-generic") }), new Map(), NOW);
  t.ok(ids(old).includes("kernel-too-old-for-nftables"));
  t.notOk(ids(old).includes(ID));
  t.ok(
    ids(judge(recordedConnNode({ kernel: null }), new Map(), NOW)).includes(ID),
    "kernel unread: still told",
  );
});
