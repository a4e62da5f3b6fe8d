import t from "tap";
import { ipvsNode, judge, NOW } from "../../helpers/rules.js";
import { emptyFacts, metrics } from "../../helpers/facts.js";

t.test("a node we cannot place is unknown, never ready", async (t) => {
  const j = judge(
    emptyFacts(),
    new Map([["kube-proxy-mode", { kind: "timeout" as const, message: "slow" }]]),
    NOW,
  );
  t.equal(j.verdict, "unknown");
});

t.test("the deprecation alone does not hold a node back from ready", async (t) => {
  const j = judge(
    ipvsNode({
      kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW }, "v1.40.1"),
    }),
    new Map(),
    NOW,
  );
  t.equal(j.findings.find((f) => f.id === "ipvs-mode-deprecated")?.severity, "error");
  t.equal(j.verdict, "ready");
});

// Issue #12 point 7: broken now is worse than "plan something". Before the switch too, a node whose
// kube-proxy rules are stale or whose kube-proxy reports itself unhealthy is unhealthy, not attention.
t.test("an ipvs node with stale rules is unhealthy, not attention", async (t) => {
  const j = judge(
    ipvsNode({
      kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 3600 }),
    }),
    new Map(),
    NOW,
  );
  t.ok(j.findings.some((f) => f.id === "kube-proxy-rules-stale"));
  t.equal(j.verdict, "unhealthy");
});

t.test("an ipvs node whose kube-proxy /healthz fails is unhealthy", async (t) => {
  const j = judge(
    ipvsNode({
      kubeProxyHealth: {
        status: 503,
        shape: "v1.33+",
        healthy: false,
        lastUpdated: null,
        currentTime: null,
        nodeEligible: null,
      },
    }),
    new Map(),
    NOW,
  );
  t.equal(j.verdict, "unhealthy");
});

t.test("the deprecation, even critical, says why to move: never unhealthy", async (t) => {
  const j = judge(
    ipvsNode({
      kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW }, "v1.43.0"),
    }),
    new Map(),
    NOW,
  );
  t.equal(j.findings.find((f) => f.id === "ipvs-mode-deprecated")?.severity, "critical");
  t.equal(j.verdict, "ready");
});
