import t from "tap";
import { addresses, ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { configz, vs } from "../../../helpers/facts.js";
import { DEFAULT_RULE_OPTIONS } from "../../../../agent/view/options.js";

t.test("foreign IPVS virtual servers are named; kube-proxy's and NodePorts are not", async (t) => {
  const f = ipvsNode();
  f.ipvs!.virtualServers.push(vs("192.168.4.11", 30080), vs("192.168.4.200", 80), {
    ...vs("0.0.0.0", 0),
    protocol: "FWM",
    address: null,
    port: null,
    fwmark: 7,
  });
  f.ipvs!.virtualServerCount = 5;
  f.addresses = addresses("192.168.4.11", ["192.168.4.200"]);
  const j = judge(f, new Map(), NOW);
  const x = j.findings.find((y) => y.id === "foreign-ipvs-virtual-servers");
  t.same(x?.evidence.virtualServers, ["TCP 192.168.4.200:80", "FWM 7"]);
  t.equal(j.verdict, "blocked");
});

t.test("without kube-ipvs0 facts nothing is called foreign", async (t) => {
  const f = ipvsNode({ kubeIpvs0: null });
  const j = judge(
    f,
    new Map([["kube-ipvs0", { kind: "missing-tool" as const, message: "ip not found" }]]),
    NOW,
  );
  t.notOk(ids(j).includes("foreign-ipvs-virtual-servers"));
});

// A cluster with a custom --service-node-port-range has NodePort virtual servers
// outside 30000-32767. The node itself says which ports are NodePorts (KUBE-NODE-PORT-* ipsets in ipvs
// mode, the service-nodeports map in nftables mode), and a configured range is accepted too.
const customRange = () => {
  const f = ipvsNode();
  f.ipvs!.virtualServers.push(vs("192.168.4.11", 40080), vs("192.168.4.11", 40053, { protocol: "UDP" }));
  f.ipvs!.virtualServerCount = 4;
  return f;
};

t.test("NodePorts learned from kube-proxy's KUBE-NODE-PORT-* ipsets are not foreign", async (t) => {
  const f = customRange();
  f.ipsets = {
    sets: [
      {
        name: "KUBE-NODE-PORT-TCP",
        type: "bitmap:port",
        family: null,
        entries: 1,
        references: 1,
        kubeProxy: true,
      },
      {
        name: "KUBE-NODE-PORT-UDP",
        type: "bitmap:port",
        family: null,
        entries: 1,
        references: 1,
        kubeProxy: true,
      },
    ],
    nodePorts: ["TCP:40080", "UDP:40053"],
  };
  const j = judge(f, new Map(), NOW);
  t.notOk(ids(j).includes("foreign-ipvs-virtual-servers"));
  t.equal(j.view.virtualServers.nodePorts.length, 2);
  t.not(j.verdict, "blocked");
});

t.test("a learned NodePort is per protocol: UDP 40080 is not TCP 40080's", async (t) => {
  const f = customRange();
  f.ipsets = { sets: [], nodePorts: ["TCP:40080", "TCP:40053"] };
  const j = judge(f, new Map(), NOW);
  t.same(j.findings.find((y) => y.id === "foreign-ipvs-virtual-servers")?.evidence.virtualServers, [
    "UDP 192.168.4.11:40053",
  ]);
});

t.test("NodePorts in the service-nodeports map of a kube-proxy table count too", async (t) => {
  const f = customRange();
  f.nftables = {
    tables: [{ family: "ip", name: "kube-proxy", owner: "kube-proxy" }],
    kubeProxyTableName: "kube-proxy",
    kubeProxy: [
      {
        family: "ip",
        name: "kube-proxy",
        sets: [{ name: "service-nodeports", kind: "map", type: "inet_proto . inet_service", elements: 2 }],
        chains: { total: 10, service: 2, endpoint: 2, external: 2, base: [] },
        nodePorts: ["TCP:40080", "UDP:40053"],
      },
    ],
    firewalls: [],
  };
  const j = judge(f, new Map(), NOW);
  t.notOk(ids(j).includes("foreign-ipvs-virtual-servers"));
});

t.test("a configured NodePort range (--node-port-range) is accepted", async (t) => {
  const j = judge(customRange(), new Map(), NOW, { ...DEFAULT_RULE_OPTIONS, nodePortRange: [40000, 40100] });
  t.notOk(ids(j).includes("foreign-ipvs-virtual-servers"));
  const dflt = judge(customRange(), new Map(), NOW);
  t.ok(ids(dflt).includes("foreign-ipvs-virtual-servers"), "outside the default range and not learned");
});

// A port inside the NodePort range is not a NodePort when kube-proxy's own NodePort sets were read and do not
// hold it: keepalived's virtual server on a node VIP (test/profiles/corpus/kubeadm-keepalived.ts is the same
// node on a real kernel). What an SRE expects, written before the rule changed: foreign, the node blocked
// (nftables mode flushes IPVS on start: cmd/kube-proxy/app/server_linux.go platformCleanup), keepalived's
// connections not counted as NodePort traffic, keepalived's scheduler not taken for kube-proxy's.
const nodePortSet = (name: string, entries: number) => ({
  name,
  type: "bitmap:port",
  family: null,
  entries,
  references: 1,
  kubeProxy: true,
});
const keepalived = (ipsets: NonNullable<Parameters<typeof ipvsNode>[0]>) => {
  const f = ipvsNode({ addresses: addresses("192.168.4.11", ["192.168.4.200"]), ...ipsets });
  f.ipvs!.virtualServers.push(
    vs("192.168.4.11", 30080),
    vs("192.168.4.200", 30080),
    vs("192.168.4.200", 30443, { scheduler: "wlc", activeConns: 40, inactiveConns: 12 }),
  );
  f.ipvs!.virtualServerCount = 5;
  f.ipvs!.schedulers = { rr: 4, wlc: 1 };
  return f;
};
const setsRead = {
  ipsets: {
    sets: [nodePortSet("KUBE-NODE-PORT-TCP", 1), nodePortSet("KUBE-NODE-PORT-UDP", 0)],
    nodePorts: ["TCP:30080"],
  },
};

t.test("ipsets read: a port in the range that KUBE-NODE-PORT-TCP does not hold is foreign", async (t) => {
  const j = judge(keepalived(setsRead), new Map(), NOW);
  t.same(j.findings.find((f) => f.id === "foreign-ipvs-virtual-servers")?.evidence.virtualServers, [
    "TCP 192.168.4.200:30443",
  ]);
  t.equal(j.verdict, "blocked");
  t.same(
    j.view.virtualServers.nodePorts.map((v) => `${v.address}:${v.port}`),
    ["192.168.4.11:30080", "192.168.4.200:30080"],
    "kube-proxy's NodePorts only, each proven by the set",
  );
  t.same(j.view.virtualServers.nodePortsGuessed, [], "nothing guessed");
  const shrink = j.findings.find((f) => f.id === "nodeport-addresses-shrink");
  t.equal(shrink?.severity, "warning", "keepalived's 40 connections are no NodePort traffic");
  t.same(shrink?.evidence.withConnections, []);
  t.equal(shrink?.evidence.nodePortVirtualServersOnSecondary, 1);
  t.notOk(ids(j).includes("ipvs-scheduler-not-rr"), "kube-proxy's config says rr; wlc is keepalived's");
});

t.test("ipsets unread: the range is kept as a guess, and said to be one", async (t) => {
  for (const [what, ipsets] of [
    ["probe failed", { ipsets: null }],
    ["members not listed", { ipsets: { sets: [nodePortSet("KUBE-NODE-PORT-TCP", 1)], nodePorts: null } }],
    ["no KUBE-NODE-PORT-TCP set", { ipsets: { sets: [], nodePorts: [] } }],
  ] as const) {
    const j = judge(keepalived(ipsets), new Map(), NOW);
    t.notOk(ids(j).includes("foreign-ipvs-virtual-servers"), `${what}: not accused`);
    t.same(
      j.view.virtualServers.nodePortsGuessed.map((v) => `${v.address}:${v.port}`),
      ["192.168.4.11:30080", "192.168.4.200:30080", "192.168.4.200:30443"],
      `${what}: every NodePort here is a guess`,
    );
    const shrink = j.findings.find((f) => f.id === "nodeport-addresses-shrink");
    t.match(shrink?.evidence.nodePortsFrom, /guess/, `${what}: the evidence says it is a guess`);
    t.notMatch(shrink?.evidence.nodePortsFrom, /prov|proof/);
  }
  const read = judge(keepalived(setsRead), new Map(), NOW);
  t.match(
    read.findings.find((f) => f.id === "nodeport-addresses-shrink")?.evidence.nodePortsFrom,
    /KUBE-NODE-PORT/,
  );
});

t.test("an IPv6 virtual server needs the KUBE-6- sets: the IPv4 ones say nothing of it", async (t) => {
  const f = keepalived(setsRead);
  f.addresses!.interfaces[1]!.addresses.push({
    family: "inet6",
    address: "fd00::200",
    prefixLen: 64,
    scope: "global",
  });
  f.ipvs!.virtualServers.push(vs("fd00::200", 30443));
  const j = judge(f, new Map(), NOW);
  t.same(
    j.view.virtualServers.nodePortsGuessed.map((v) => `${v.address}:${v.port}`),
    ["fd00::200:30443"],
  );
  f.ipsets!.sets.push(nodePortSet("KUBE-6-NODE-PORT-TCP", 0));
  t.ok(
    judge(f, new Map(), NOW).view.virtualServers.foreign.some((v) => v.address === "fd00::200"),
    "with an empty KUBE-6-NODE-PORT-TCP read: foreign",
  );
});

t.test("kube-proxy's own ipvs.excludeCIDRs say a virtual server there is not kube-proxy's", async (t) => {
  const f = keepalived({ ipsets: null });
  f.configz = configz({ ipvs: { ...configz().ipvs, excludeCIDRs: ["192.168.4.200/32"] } });
  const j = judge(f, new Map(), NOW);
  t.same(j.findings.find((x) => x.id === "foreign-ipvs-virtual-servers")?.evidence.virtualServers, [
    "TCP 192.168.4.200:30080",
    "TCP 192.168.4.200:30443",
  ]);
  // A port the sets hold is kube-proxy's NodePort whatever the exclusion.
  f.ipsets = setsRead.ipsets;
  t.same(
    judge(f, new Map(), NOW).findings.find((x) => x.id === "foreign-ipvs-virtual-servers")?.evidence
      .virtualServers,
    ["TCP 192.168.4.200:30443"],
  );
});
