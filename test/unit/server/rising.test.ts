import t from "tap";
import { risingCounters } from "../../../agent/server/rising.js";
import { metrics } from "../../helpers/facts.js";
import { movedWithBlackHole, reportOf } from "../../helpers/reports.js";

const SYNC = "kubeproxy_sync_proxy_rules_nftables_sync_failures_total";
const withCounters = (mode: string, values: Record<string, number>) =>
  reportOf(movedWithBlackHole({ proxyMode: { mode }, kubeProxyMetrics: metrics(values) }));

t.test("a failure counter that grew between scans is rising", async (t) => {
  const before = withCounters("nftables", { [SYNC]: 3 });
  const after = withCounters("nftables", { [SYNC]: 5 });
  t.same(risingCounters(before, after), [{ name: SYNC, previous: 3, current: 5 }]);
  t.same(risingCounters(after, after), [], "unchanged is not rising");
  t.same(risingCounters(null, after), [], "nothing to compare on the first scan");
});

t.test("a counter appearing after its first failure rises from zero", async (t) => {
  const before = withCounters("nftables", {});
  const after = withCounters("nftables", { [SYNC]: 1 });
  t.same(risingCounters(before, after), [{ name: SYNC, previous: 0, current: 1 }]);
});

t.test("across a mode change or an unread scan nothing is told", async (t) => {
  const ipvs = withCounters("ipvs", { kubeproxy_sync_proxy_rules_iptables_restore_failures_total: 1 });
  const nft = withCounters("nftables", { [SYNC]: 9 });
  t.same(risingCounters(ipvs, nft), []);
  const unread = reportOf(movedWithBlackHole({ kubeProxyMetrics: null }), {
    "kube-proxy-metrics": { kind: "unreachable", message: "refused" },
  });
  t.same(risingCounters(unread, nft), []);
});
