import t from "tap";
import { ipvsNode, judge, nftNode, NOW } from "../../helpers/rules.js";
import { decideVerdict } from "../../../agent/rules/verdict.js";
import type { Finding } from "../../../agent/report/schema.js";
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

// Broken now is worse than "plan something". Before the switch too, a node whose
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

// After the switch, "clean" means no finding of warning or above at all. A warning that is neither left
// over nor broken — one family's kube-proxy table missing while kube-proxy syncs — is something to look
// at: "attention", the word the verdict already has for it before the switch. Expected by an SRE before
// the rule was changed (test/profiles/corpus/kubeadm-calico.ts, node kubeadm-calico-noip6, says the same of a real node).
t.test("after the switch, a warning that is no leftover is attention, never clean", async (t) => {
  const table = (family: "ip" | "ip6") => ({
    family,
    name: "kube-proxy",
    sets: [],
    chains: { total: 10, service: 1, endpoint: 1, external: 0, base: [] },
  });
  const node = (...families: ("ip" | "ip6")[]) =>
    nftNode({
      kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5 }),
      nftables: {
        tables: families.map((family) => ({ family, name: "kube-proxy", owner: "kube-proxy" })),
        kubeProxyTableName: "kube-proxy",
        kubeProxy: families.map(table),
        firewalls: [],
      },
    });
  const missing = judge(node("ip"), new Map(), NOW);
  t.same(
    missing.findings.map((f) => `${f.id} ${f.severity}`),
    ["nftables-table-missing warning"],
    "only the ip6 table missing, kube-proxy syncing",
  );
  t.equal(missing.verdict, "attention");
  t.equal(judge(node("ip", "ip6"), new Map(), NOW).verdict, "clean", "both tables: clean");
});

t.test("after the switch: broken, then leftovers, then a hole in the scan, then attention", async (t) => {
  const f = (id: string, severity: Finding["severity"], stage: Finding["stage"] = "after"): Finding => ({
    id,
    severity,
    stage,
    blocksMigration: false,
    title: "",
    evidence: {},
    remedy: "",
    reference: "",
  });
  const warning = f("nftables-table-missing", "warning");
  t.equal(decideVerdict("nftables", [warning]), "attention");
  t.equal(decideVerdict("none", [warning]), "attention", "no kube-proxy: the same words");
  t.equal(decideVerdict("nftables", [warning, f("kube-ipsets-left", "warning")]), "leftovers");
  t.equal(decideVerdict("nftables", [warning, f("scan-incomplete", "warning", "any")]), "unknown");
  t.equal(decideVerdict("nftables", [warning, f("services-lost-in-switch", "error")]), "unhealthy");
  t.equal(decideVerdict("nftables", [f("kube-proxy-free", "info", "any")]), "clean", "info alone: clean");
});
