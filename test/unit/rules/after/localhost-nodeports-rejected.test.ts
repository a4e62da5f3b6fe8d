import t from "tap";
import { ids, judge, nftNode, NOW } from "../../../helpers/rules.js";
import { metrics } from "../../../helpers/facts.js";

t.test("localhost NodePort packets rejected in nftables mode are told; zero is nothing", async (t) => {
  const c = "kubeproxy_nftables_localhost_nodeport_rejected_packets_total";
  const rejected = judge(
    nftNode({
      kubeProxyMetrics: metrics({ [c]: 12, kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 10 }),
    }),
    new Map(),
    NOW,
  );
  t.ok(ids(rejected).includes("localhost-nodeports-rejected"));
  const none = judge(
    nftNode({
      kubeProxyMetrics: metrics({ [c]: 0, kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 10 }),
    }),
    new Map(),
    NOW,
  );
  t.notOk(ids(none).includes("localhost-nodeports-rejected"));
});
