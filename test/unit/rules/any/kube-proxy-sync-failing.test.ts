import t from "tap";
import { ids, judge, NOW } from "../../../helpers/rules.js";
import { emptyFacts, metrics, noKernelState } from "../../../helpers/facts.js";

t.test("sync failures: nftables counter present > 0 is critical; absent is healthy", async (t) => {
  const failing = emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({
      kubeproxy_sync_proxy_rules_nftables_sync_failures_total: 3,
      kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW,
    }),
  });
  const j = judge(failing, new Map(), NOW);
  t.ok(ids(j).includes("kube-proxy-sync-failing"));
  t.equal(j.verdict, "unhealthy");
});
