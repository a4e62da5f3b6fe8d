import { CLEANUP_FAILURE_COUNTER, counterTrend, counterValue, readCounter } from "../../view/counters.js";
import { rule } from "../rule.js";

export const cleanupFailing = rule({
  findings: {
    "kube-proxy-cleanup-failing": { severity: "error", stage: "any" },
    "kube-proxy-cleanup-failed-earlier": { severity: "info", stage: "any" },
  },
  needs: ["kubeProxyMetrics", "proxyMode"],
  evaluate({ facts, previous, view: { runningMode } }) {
    if (runningMode === null) return [];
    const v = counterValue(readCounter(facts, runningMode, CLEANUP_FAILURE_COUNTER));
    if (v === null || v <= 0) return [];
    // Cumulative since kube-proxy started: failing now only when it rose since the previous scan.
    const t = counterTrend(facts, previous, runningMode, CLEANUP_FAILURE_COUNTER);
    const evidence = {
      [CLEANUP_FAILURE_COUNTER]: v,
      [`${CLEANUP_FAILURE_COUNTER} (previous scan)`]:
        t.before ?? (previous === null ? "no previous scan" : "not comparable (mode changed or not read)"),
    };
    if (t.trend === "rose") {
      return [
        {
          id: "kube-proxy-cleanup-failing",
          severity: "error",
          stage: "any",
          blocksMigration: false,
          title: `kube-proxy's cleanup of stale nftables state is failing: ${v} failures, up since the previous scan`,
          evidence,
          remedy:
            "Usually leftovers of the previous mode or something else writing into kube-proxy's tables: check the log and run proxyscope-agent cleanup (dry run first)",
        },
      ];
    }
    return [
      {
        id: "kube-proxy-cleanup-failed-earlier",
        severity: "info",
        stage: "any",
        blocksMigration: false,
        title:
          previous === null
            ? `kube-proxy's cleanup of stale nftables state has failed ${v} times since it started (one scan cannot tell whether it still fails)`
            : `kube-proxy's cleanup of stale nftables state failed ${v} times earlier; none since the previous scan`,
        evidence,
        remedy:
          "Nothing to do now; if it recurs, read kube-proxy's log (leftovers of the previous mode, or something else writing into kube-proxy's tables)",
      },
    ];
  },
});
