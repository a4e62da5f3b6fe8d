import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { refused } from "../../../helpers/facts.js";

t.test("kube-proxy not answering while ipvs state is present", async (t) => {
  const f = ipvsNode({ proxyMode: null, kubeProxyMetrics: null, configz: null });
  const j = judge(f, new Map([["kube-proxy-mode", refused]]), NOW);
  t.equal(j.phase, "ipvs");
  t.ok(ids(j).includes("kube-proxy-not-answering"));
});
