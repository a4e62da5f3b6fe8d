import t from "tap";
import { ids, judge, NOW } from "../../../helpers/rules.js";
import { emptyFacts, metrics, noKernelState } from "../../../helpers/facts.js";

t.test("stale and hung syncs", async (t) => {
  const stale = emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 900 }),
  });
  t.ok(ids(judge(stale, new Map(), NOW)).includes("kube-proxy-rules-stale"));
  const hung = emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({
      kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 100,
      kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds: NOW - 100 + 400,
    }),
  });
  const j = judge(hung, new Map(), NOW);
  t.match(j.findings.find((f) => f.id === "kube-proxy-rules-stale")?.title, /hung/);
  const fresh = emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 100 }),
  });
  t.notOk(ids(judge(fresh, new Map(), NOW)).includes("kube-proxy-rules-stale"));
});

t.test("dual-stack: one stale IP family makes the node stale, whatever the other says", async (t) => {
  const f = emptyFacts({ ...noKernelState, proxyMode: { mode: "nftables" }, kubeProxyMetrics: metrics({}) });
  // IPv4 synced 5 s ago, IPv6 900 s ago: a sum or a mean of the two would hide it.
  f.kubeProxyMetrics!.metrics["kubeproxy_sync_proxy_rules_last_timestamp_seconds"] = {
    type: "gauge",
    value: NOW - 5 + (NOW - 900),
    series: 2,
    min: NOW - 900,
    max: NOW - 5,
  };
  const stale = judge(f, new Map(), NOW).findings.find((x) => x.id === "kube-proxy-rules-stale");
  t.equal(stale?.evidence.lastSyncAgeSeconds, 900);
});
