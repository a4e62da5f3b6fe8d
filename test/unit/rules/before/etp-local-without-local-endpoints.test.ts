import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { metrics } from "../../../helpers/facts.js";

t.test("Services with a Local policy and no local endpoint, in ipvs mode, are told", async (t) => {
  const g = "kubeproxy_sync_proxy_rules_no_local_endpoints_total";
  const m = (n: number) => metrics({ [g]: n, kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 10 });
  t.ok(
    ids(judge(ipvsNode({ kubeProxyMetrics: m(2) }), new Map(), NOW)).includes(
      "etp-local-without-local-endpoints",
    ),
  );
  t.notOk(
    ids(judge(ipvsNode({ kubeProxyMetrics: m(0) }), new Map(), NOW)).includes(
      "etp-local-without-local-endpoints",
    ),
  );
});
