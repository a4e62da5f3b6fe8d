import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { configz, noKernelState } from "../../../helpers/facts.js";

const nftNode = (over = {}) =>
  ipvsNode({
    proxyMode: { mode: "nftables" },
    configz: configz({ mode: "nftables" }),
    ipvs: noKernelState.ipvs,
    kubeIpvs0: noKernelState.kubeIpvs0,
    ...over,
  });

t.test("IPVS virtual servers left on an nftables node; none left is nothing", async (t) => {
  const ipvs = ipvsNode().ipvs!;
  const left = judge(nftNode({ ipvs }), new Map(), NOW);
  t.ok(ids(left).includes("ipvs-virtual-servers-left"));
  t.notOk(ids(judge(nftNode(), new Map(), NOW)).includes("ipvs-virtual-servers-left"));
});
