import t from "tap";
import { ids, judge, NOW } from "../../../helpers/rules.js";
import { emptyFacts, metrics, noKernelState } from "../../../helpers/facts.js";
import { buildReport } from "../../../../agent/assemble/report.js";
import { DEFAULT_RULE_OPTIONS } from "../../../../agent/view/options.js";
import type { NodeFacts } from "../../../../agent/report/schema.js";

// kube-proxy's *_failures_total counters are cumulative. A failure is current when the
// counter rose since the previous scan (serve keeps it) or the last successful sync is stale; a past
// failure that has not recurred is info at most — the alerts already use rates, and so does the verdict.

const table = {
  tables: (["ip", "ip6"] as const).map((family) => ({ family, name: "kube-proxy", owner: "kube-proxy" })),
  kubeProxyTableName: "kube-proxy",
  kubeProxy: (["ip", "ip6"] as const).map((family) => ({
    family,
    name: "kube-proxy",
    sets: [{ name: "service-ips", kind: "map" as const, type: "x", elements: 3 }],
    chains: { total: 12, service: 3, endpoint: 3, external: 0, base: [] },
  })),
  firewalls: [],
};

const nft = (values: Record<string, number>): NodeFacts =>
  emptyFacts({
    ...noKernelState,
    nftables: table,
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5, ...values }),
  });
const SYNC = "kubeproxy_sync_proxy_rules_nftables_sync_failures_total";
const CLEANUP = "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total";
const withPrevious = (now: NodeFacts, before: NodeFacts | null) =>
  judge(now, new Map(), NOW, DEFAULT_RULE_OPTIONS, before);

t.test("one scan, a counter above zero, syncs fresh: a past failure, info only", async (t) => {
  const j = judge(nft({ [SYNC]: 3 }), new Map(), NOW);
  t.same(ids(j), ["kube-proxy-sync-failed-earlier"]);
  t.equal(j.findings[0]?.severity, "info");
  t.equal(j.findings[0]?.evidence[SYNC], 3);
  t.equal(j.verdict, "clean");
});

t.test("the counter rose since the previous scan: failing now, critical", async (t) => {
  const j = withPrevious(nft({ [SYNC]: 5 }), nft({ [SYNC]: 3 }));
  t.same(ids(j), ["kube-proxy-sync-failing"]);
  t.equal(j.findings[0]?.evidence[`${SYNC} (previous scan)`], 3);
  t.equal(j.verdict, "unhealthy");
});

t.test("the counter did not move since the previous scan: info", async (t) => {
  const j = withPrevious(nft({ [SYNC]: 3 }), nft({ [SYNC]: 3 }));
  t.same(ids(j), ["kube-proxy-sync-failed-earlier"]);
  t.equal(j.verdict, "clean");
});

t.test("a counter above zero with the last successful sync stale: failing now", async (t) => {
  const f = nft({ [SYNC]: 3, kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 3600 });
  const j = judge(f, new Map(), NOW);
  t.ok(ids(j).includes("kube-proxy-sync-failing"));
  t.notOk(ids(j).includes("kube-proxy-sync-failed-earlier"));
});

t.test("kube-proxy restarted between scans: what it counts now happened since", async (t) => {
  const j = withPrevious(nft({ [SYNC]: 1 }), nft({ [SYNC]: 7 }));
  t.same(ids(j), ["kube-proxy-sync-failing"]);
});

t.test("a previous scan in another mode says nothing: info", async (t) => {
  const before = { ...nft({ [SYNC]: 0 }), proxyMode: { mode: "ipvs" } };
  const j = withPrevious(nft({ [SYNC]: 3 }), before);
  t.same(ids(j), ["kube-proxy-sync-failed-earlier"]);
});

t.test("cleanup failures: error only while rising, info once they stop", async (t) => {
  t.same(ids(withPrevious(nft({ [CLEANUP]: 4 }), nft({ [CLEANUP]: 2 }))), ["kube-proxy-cleanup-failing"]);
  const old = withPrevious(nft({ [CLEANUP]: 2 }), nft({ [CLEANUP]: 2 }));
  t.same(ids(old), ["kube-proxy-cleanup-failed-earlier"]);
  t.equal(old.verdict, "clean");
  t.same(ids(judge(nft({ [CLEANUP]: 2 }), new Map(), NOW)), ["kube-proxy-cleanup-failed-earlier"]);
});

t.test("a report built with the previous scan compares the counters (what serve does)", async (t) => {
  const runs = (f: NodeFacts) => [
    { name: "kube-proxy-mode" as const, outcome: { ok: true as const, facts: f.proxyMode }, durationMs: 1 },
    {
      name: "kube-proxy-metrics" as const,
      outcome: { ok: true as const, facts: f.kubeProxyMetrics },
      durationMs: 1,
    },
    { name: "nftables" as const, outcome: { ok: true as const, facts: f.nftables }, durationMs: 1 },
  ];
  const meta = (previous: ReturnType<typeof buildReport> | null) => ({
    node: "n",
    agentVersion: "t",
    startedAt: new Date(NOW * 1000 - 1000),
    finishedAt: new Date(NOW * 1000),
    previous,
  });
  const first = buildReport(runs(nft({ [SYNC]: 3 })), meta(null));
  t.same(
    first.findings.map((f) => f.id),
    ["kube-proxy-sync-failed-earlier"],
  );
  const second = buildReport(runs(nft({ [SYNC]: 4 })), meta(first));
  t.same(
    second.findings.map((f) => f.id),
    ["kube-proxy-sync-failing"],
  );
  t.equal(second.verdict, "unhealthy");
});
