import type { Finding } from "../report/schema.js";
import { versionParts, type Rule } from "./input.js";
import { counterValue, describeCounter, readCounter, timestamp } from "./kube-proxy-counters.js";
import { REF } from "./references.js";
import { CLEANUP_FAILURE_COUNTER, SYNC_FAILURE_COUNTERS } from "./thresholds.js";

export const syncFailing: Rule = ({ facts, runningMode }) => {
  if (runningMode === null) return [];
  const failing = SYNC_FAILURE_COUNTERS.map((n) => [n, readCounter(facts, runningMode, n)] as const).filter(
    ([, r]) => (counterValue(r) ?? 0) > 0,
  );
  if (failing.length === 0) return [];
  return [
    {
      id: "kube-proxy-sync-failing",
      severity: "critical",
      stage: "any",
      blocksMigration: false,
      title: "kube-proxy has failed to sync rules on this node",
      evidence: Object.fromEntries(failing.map(([n, r]) => [n, describeCounter(r)])),
      remedy:
        "Read kube-proxy's log on this node for the failing sync; alert on rate(...[5m]) > 0 to see whether it is still failing",
      reference: REF.verify,
    },
  ];
};

export const cleanupFailing: Rule = ({ facts, runningMode }) => {
  if (runningMode === null) return [];
  const r = readCounter(facts, runningMode, CLEANUP_FAILURE_COUNTER);
  const v = counterValue(r);
  if (v === null || v <= 0) return [];
  return [
    {
      id: "kube-proxy-cleanup-failing",
      severity: "error",
      stage: "any",
      blocksMigration: false,
      title: `kube-proxy's cleanup of stale nftables state has failed ${v} times`,
      evidence: { kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total: v },
      remedy:
        "Usually leftovers of the previous mode or something else writing into kube-proxy's tables: check the log and run proxyscope-agent cleanup (dry run first)",
      reference: REF.verify,
    },
  ];
};

export const rulesStale: Rule = ({ facts, now, runningMode }, opts) => {
  if (runningMode === null) return [];
  const last = timestamp(facts, "kubeproxy_sync_proxy_rules_last_timestamp_seconds", "oldest");
  const queued = timestamp(facts, "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds", "newest");
  if (last === null) return [];
  const age = now - last;
  const behind = queued !== null ? queued - last : null;
  const hung = behind !== null && behind > opts.staleAfterS;
  if (age <= opts.staleAfterS && !hung) return [];
  return [
    {
      id: "kube-proxy-rules-stale",
      severity: "critical",
      stage: "any",
      blocksMigration: false,
      title: hung
        ? `kube-proxy queued a sync ${Math.round(behind!)} s after its last successful one: it is hung`
        : `kube-proxy's last successful sync was ${Math.round(age)} s ago`,
      evidence: {
        lastSyncAgeSeconds: Math.round(age),
        kubeproxy_sync_proxy_rules_last_timestamp_seconds: last,
        kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds: queued,
        thresholdSeconds: opts.staleAfterS,
      },
      remedy:
        "Restart kube-proxy on this node and read its log; the node's Service rules are drifting from the API server",
      reference: REF.verify,
    },
  ];
};

export const kubeProxyNotAnswering: Rule = ({ facts, phase, failedProbes, runningMode }) => {
  if (runningMode !== null || phase === "none") return [];
  if (!failedProbes.has("kube-proxy-mode")) return [];
  return [
    {
      id: "kube-proxy-not-answering",
      severity: "error",
      stage: "any",
      blocksMigration: false,
      title:
        phase === "unknown"
          ? "kube-proxy does not answer and the kernel state does not tell the mode"
          : `kube-proxy does not answer /proxyMode, though the kernel holds ${phase}-mode state`,
      evidence: { inferredPhase: phase, configuredMode: facts.configz?.mode ?? null },
      remedy:
        "Check the kube-proxy pod on this node, and proxyscope's --kube-proxy-metrics-url (kube-proxy's metricsBindAddress)",
      reference: REF.verify,
    },
  ];
};

export const kubeProxyUnhealthy: Rule = ({ facts }) => {
  const h = facts.kubeProxyHealth;
  if (!h || h.status === 200) return [];
  if (h.healthy === true) {
    return [
      {
        id: "kube-proxy-node-draining",
        severity: "info",
        stage: "any",
        blocksMigration: false,
        title:
          "kube-proxy's health check answers 503 with healthy: true: the node is being deleted or drained",
        evidence: { status: h.status, healthy: true, nodeEligible: h.nodeEligible },
        remedy: "Nothing to fix in kube-proxy; load balancers are being told to stop sending to this node",
        reference: REF.verify,
      },
    ];
  }
  return [
    {
      id: "kube-proxy-unhealthy",
      severity: "error",
      stage: "any",
      blocksMigration: false,
      title: `kube-proxy's health check answers ${h.status}`,
      evidence: { status: h.status, healthy: h.healthy, lastUpdated: h.lastUpdated },
      remedy:
        "Read kube-proxy's log on this node; load balancers with health checks on :10256 stop sending traffic here",
      reference: REF.verify,
    },
  ];
};

export const deprecationStage: Rule = ({ facts, phase }) => {
  if (phase !== "ipvs") return [];
  const v = versionParts(facts.kubeProxyMetrics?.gitVersion);
  if (!v) return [];
  const minor = v[0] === 1 ? v[1]! : 99;
  const gate = facts.configz?.featureGates["KubeProxyIPVS"];
  const [severity, text]: [Finding["severity"], string] =
    minor >= 43
      ? ["critical", "ipvs mode is removed in 1.43"]
      : minor >= 40
        ? [
            "error",
            `ipvs mode is off by default since 1.40 and runs only because KubeProxyIPVS=${gate ?? "?"}; it is removed in 1.43`,
          ]
        : minor >= 37
          ? [
              "warning",
              "ipvs mode is behind the KubeProxyIPVS gate (on by default) since 1.37; off by default in 1.40, removed in 1.43",
            ]
          : minor >= 35
            ? [
                "warning",
                "kube-proxy logs an ipvs deprecation warning since 1.35; off by default in 1.40, removed in 1.43",
              ]
            : ["info", "ipvs mode is deprecated (KEP-5495): off by default in 1.40, removed in 1.43"];
  return [
    {
      id: "ipvs-mode-deprecated",
      severity,
      stage: "any",
      blocksMigration: false,
      title: `kube-proxy ${facts.kubeProxyMetrics?.gitVersion} runs ipvs mode: ${text}`,
      evidence: { kubeProxyVersion: facts.kubeProxyMetrics?.gitVersion ?? null, KubeProxyIPVS: gate ?? null },
      remedy: "Plan the move to nftables mode (or iptables mode where the kernel is older than 5.13)",
      reference: REF.stages,
    },
  ];
};

export const kubeProxyFree: Rule = ({ phase }) =>
  phase !== "none"
    ? []
    : [
        {
          id: "kube-proxy-free",
          severity: "info",
          stage: "any",
          blocksMigration: false,
          title:
            "No kube-proxy answers here and the kernel holds no kube-proxy state: nothing to migrate on this node",
          evidence: {},
          remedy:
            "None. If a CNI (Cilium, Calico eBPF) implements Services here, the ipvs deprecation does not reach this node",
          reference: REF.kubeProxyFree,
        },
      ];
