import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { noKernelState } from "../../../helpers/facts.js";

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
