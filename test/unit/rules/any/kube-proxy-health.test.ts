import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";

t.test("health: 503 with healthy true is draining, not broken", async (t) => {
  const f = ipvsNode({
    kubeProxyHealth: {
      status: 503,
      shape: "v1.33+",
      healthy: true,
      lastUpdated: null,
      currentTime: null,
      nodeEligible: false,
    },
  });
  const j = judge(f, new Map(), NOW);
  t.ok(ids(j).includes("kube-proxy-node-draining"));
  t.notOk(ids(j).includes("kube-proxy-unhealthy"));
});
