import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { configz, noKernelState } from "../../../helpers/facts.js";

t.test("kube-proxy's nftables table on a node back in ipvs mode is told", async (t) => {
  const table = {
    family: "ip" as const,
    name: "kube-proxy",
    chains: 12,
    sets: 4,
    maps: 6,
    serviceElements: 3,
    nodePorts: [],
  };
  const back = judge(
    ipvsNode({ nftables: { ...noKernelState.nftables!, kubeProxy: [table] } }),
    new Map(),
    NOW,
  );
  t.ok(ids(back).includes("nftables-state-after-rollback"));
  t.notOk(ids(judge(ipvsNode(), new Map(), NOW)).includes("nftables-state-after-rollback"));
});

// After a rollback, kube-proxy answering ipvs is not enough: its data plane must be back.
t.test(
  "rollback to ipvs: the ipvs data plane checked (virtual servers, kube-ipvs0 with ClusterIPs)",
  async (t) => {
    const table = {
      family: "ip" as const,
      name: "kube-proxy",
      chains: 12,
      sets: 4,
      maps: 6,
      serviceElements: 3,
      nodePorts: [],
    };
    const nftables = { ...noKernelState.nftables!, kubeProxy: [table] };
    const f = (over: object) =>
      judge(ipvsNode({ nftables, ...over }), new Map(), NOW).findings.find(
        (x) => x.id === "nftables-state-after-rollback",
      );
    const back = f({});
    t.equal(back?.severity, "warning");
    t.equal(back?.evidence.ipvsDataPlane, "back");
    t.equal(back?.evidence.ipvsVirtualServers, 2);
    t.equal(back?.evidence.kubeIpvs0Addresses, 2);

    const noVs = f({
      ipvs: { ...noKernelState.ipvs!, available: true, virtualServerCount: 0, virtualServers: [] },
    });
    t.equal(noVs?.severity, "critical");
    t.match(noVs?.evidence.ipvsDataPlane, /no IPVS virtual servers/);
    t.match(noVs?.remedy, /^Do not delete the nftables tables yet/);

    const noDummy = f({ kubeIpvs0: noKernelState.kubeIpvs0 });
    t.equal(noDummy?.severity, "critical");
    t.match(noDummy?.evidence.ipvsDataPlane, /kube-ipvs0 absent or empty/);

    // Unread is not "back", and not "gone" either.
    const unread = f({ ipvs: null });
    t.equal(unread?.severity, "warning");
    t.equal(unread?.evidence.ipvsVirtualServers, "not read");
    t.equal(unread?.evidence.ipvsDataPlane, "not read");
  },
);

// The remedy deletes the table kube-proxy uses: the one /configz names, else the default, said to be one.
t.test("the remedy names /configz's table, or says the name is the default", async (t) => {
  const remedy = (name: string, over: object) => {
    const table = {
      family: "ip" as const,
      name,
      chains: 1,
      sets: 0,
      maps: 0,
      serviceElements: 0,
      nodePorts: [],
    };
    const nftables = { ...noKernelState.nftables!, kubeProxy: [table] };
    return judge(ipvsNode({ nftables, ...over }), new Map(), NOW).findings.find(
      (x) => x.id === "nftables-state-after-rollback",
    )?.remedy;
  };
  const named = remedy("kp-custom", { configz: configz({ nftablesTableName: "kp-custom" }) });
  t.match(named, /nft delete table ip kp-custom; nft delete table ip6 kp-custom/);
  t.notMatch(named, /table ip kube-proxy/);
  t.notMatch(named, /default/, "a name /configz gave is not called the default");
  const unread = remedy("kube-proxy", { configz: null });
  t.match(unread, /nft delete table ip kube-proxy/);
  t.match(unread, /kube-proxy's default table name.*\/configz not read/);
});
