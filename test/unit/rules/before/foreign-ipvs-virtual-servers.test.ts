import t from "tap";
import { addresses, ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { vs } from "../../../helpers/facts.js";
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

// Issue #12 point 3: a cluster with a custom --service-node-port-range has NodePort virtual servers
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
