import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { metrics } from "../../../helpers/facts.js";

t.test("a healthy ipvs node on a new kernel is ready, with the deprecation noted", async (t) => {
  const j = judge(ipvsNode(), new Map(), NOW);
  t.equal(j.phase, "ipvs");
  t.equal(j.verdict, "ready");
  t.same(ids(j), ["ipvs-mode-deprecated"]);
  t.equal(j.findings[0]!.severity, "info");
});

t.test("deprecation stage follows kube-proxy's version", async (t) => {
  const at = (v: string) =>
    judge(
      ipvsNode({ kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW }, v) }),
      new Map(),
      NOW,
    ).findings.find((f) => f.id === "ipvs-mode-deprecated")?.severity;
  t.equal(at("v1.33.1"), "info");
  t.equal(at("v1.37.0"), "warning");
  t.equal(at("v1.40.2"), "error");
  t.equal(at("v1.43.0"), "critical");
});
