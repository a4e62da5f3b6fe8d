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
