import t from "tap";
import type { IptablesBackendRead } from "../../../../agent/facts/netfilter.js";
import { ids, ipvsNode, judge, nftNode, NOW } from "../../../helpers/rules.js";
import { configz, iptablesBackend, noKernelState } from "../../../helpers/facts.js";

type Chain = IptablesBackendRead["kubeChains"][number];

t.test(
  "kube-proxy's ipvs-mode chains left on an nftables node; kubelet's chains are not leftovers",
  async (t) => {
    const chain = (name: string, owner: Chain["owner"] = "kube-proxy-ipvs", table = "nat"): Chain => ({
      table,
      name,
      rules: 3,
      owner,
    });
    const judged = (kubeChains: Chain[]) =>
      ids(judge(nftNode({ iptables: { backends: [iptablesBackend({ kubeChains })] } }), new Map(), NOW));
    t.ok(judged([chain("KUBE-SERVICES"), chain("KUBE-NODE-PORT")]).includes("ipvs-iptables-chains-left"));
    t.notOk(judged([]).includes("ipvs-iptables-chains-left"), "no chains: nothing left");
    t.notOk(
      judged([
        chain("KUBE-FIREWALL", "kubelet", "filter"),
        chain("KUBE-KUBELET-CANARY", "kubelet", "mangle"),
      ]).includes("ipvs-iptables-chains-left"),
      "kubelet's chains are kubelet's, not kube-proxy leftovers",
    );
  },
);

// ipvs -> iptables (a node below kernel 5.13): kube-proxy cleans up ipvs mode's state only when the new mode is
// not iptables-based (cmd/kube-proxy/app/server_linux.go platformCleanup: `if !isIPTablesBased(mode) ||
// cleanupAndExit`), so ipvs mode's own chains stay, still jumped to from INPUT/OUTPUT: KUBE-IPVS-FILTER
// keeps rejecting new connections to kube-ipvs0's addresses. What an SRE expects, written before the rule
// changed: the chains iptables mode does not own itself are leftovers there too; the ones it owns
// (pkg/proxy/iptables/cleanup.go: KUBE-SERVICES, KUBE-NODEPORTS, KUBE-POSTROUTING, KUBE-MARK-MASQ,
// KUBE-PROXY-CANARY, KUBE-EXTERNAL-SERVICES, KUBE-FORWARD, KUBE-PROXY-FIREWALL, per-Service chains) are not.
t.test("on an iptables node: ipvs mode's own chains are left, iptables mode's are its own", async (t) => {
  const chain = (table: string, name: string, owner: Chain["owner"]): Chain => ({
    table,
    name,
    rules: 2,
    owner,
  });
  const kubeChains = [
    chain("nat", "KUBE-SERVICES", "kube-proxy"),
    chain("nat", "KUBE-POSTROUTING", "kube-proxy"),
    chain("nat", "KUBE-MARK-MASQ", "kube-proxy"),
    chain("filter", "KUBE-FORWARD", "kube-proxy"),
    chain("filter", "KUBE-PROXY-FIREWALL", "kube-proxy"),
    chain("nat", "KUBE-NODEPORTS", "kube-proxy-iptables"),
    chain("filter", "KUBE-EXTERNAL-SERVICES", "kube-proxy-iptables"),
    chain("mangle", "KUBE-PROXY-CANARY", "kube-proxy-iptables"),
    chain("filter", "KUBE-FIREWALL", "kubelet"),
    chain("nat", "KUBE-NODE-PORT", "kube-proxy-ipvs"),
    chain("nat", "KUBE-LOAD-BALANCER", "kube-proxy-ipvs"),
    chain("filter", "KUBE-IPVS-FILTER", "kube-proxy-ipvs"),
    chain("filter", "KUBE-IPVS-OUT-FILTER", "kube-proxy-ipvs"),
  ];
  const iptablesNode = (chains: Chain[]) =>
    ipvsNode({
      proxyMode: { mode: "iptables" },
      configz: configz({ mode: "iptables" }),
      ipvs: noKernelState.ipvs,
      kubeIpvs0: noKernelState.kubeIpvs0,
      iptables: {
        backends: [
          iptablesBackend({ kubeChains: chains, patternCounts: { "KUBE-SVC-*": 4, "KUBE-SEP-*": 6 } }),
        ],
      },
    });
  const j = judge(iptablesNode(kubeChains), new Map(), NOW);
  t.equal(j.phase, "iptables");
  const f = j.findings.find((x) => x.id === "ipvs-iptables-chains-left");
  t.same(f?.evidence.chains, [
    "ipv4 nft nat/KUBE-NODE-PORT (2 rules, kube-proxy-ipvs)",
    "ipv4 nft nat/KUBE-LOAD-BALANCER (2 rules, kube-proxy-ipvs)",
    "ipv4 nft filter/KUBE-IPVS-FILTER (2 rules, kube-proxy-ipvs)",
    "ipv4 nft filter/KUBE-IPVS-OUT-FILTER (2 rules, kube-proxy-ipvs)",
  ]);
  t.equal(f?.evidence.perServiceChains, 0, "iptables mode's per-Service chains are its own");
  t.notMatch(f?.remedy, /proxyscope-agent cleanup/, "cleanup acts only after a move to nftables");
  t.match(f?.remedy, /kube-proxy --cleanup/);
  t.notOk(
    ids(judge(iptablesNode(kubeChains.slice(0, 9)), new Map(), NOW)).includes("ipvs-iptables-chains-left"),
    "iptables mode's own chains and kubelet's: nothing left",
  );
});
