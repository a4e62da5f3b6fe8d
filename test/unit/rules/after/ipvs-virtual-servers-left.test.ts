import t from "tap";
import { ids, ipvsNode, judge, nftNode, NOW } from "../../../helpers/rules.js";

t.test("IPVS virtual servers left on an nftables node; none left is nothing", async (t) => {
  const ipvs = ipvsNode().ipvs!;
  const left = judge(nftNode({ ipvs }), new Map(), NOW);
  t.ok(ids(left).includes("ipvs-virtual-servers-left"));
  t.notOk(ids(judge(nftNode(), new Map(), NOW)).includes("ipvs-virtual-servers-left"));
});
