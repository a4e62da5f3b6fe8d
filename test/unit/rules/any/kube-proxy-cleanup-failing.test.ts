import t from "tap";
import { ids, judge, nftNode, NOW } from "../../../helpers/rules.js";
import { metrics } from "../../../helpers/facts.js";

t.test("cleanup failures above zero are told; zero is nothing", async (t) => {
  const c = "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total";
  const m = (n: number) => metrics({ [c]: n, kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 10 });
  const failing = judge(nftNode({ kubeProxyMetrics: m(3) }), new Map(), NOW);
  t.ok(
    ids(failing).some((i) => i.startsWith("kube-proxy-cleanup-fail")),
    ids(failing).join(","),
  );
  t.notOk(
    ids(judge(nftNode({ kubeProxyMetrics: m(0) }), new Map(), NOW)).some((i) =>
      i.startsWith("kube-proxy-cleanup-fail"),
    ),
  );
});
