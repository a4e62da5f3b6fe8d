import { CLEANUP_FAILURE_COUNTER, counterValue, readCounter } from "../../view/counters.js";
import { REF } from "../references.js";
import { rule } from "../rule.js";

export const cleanupFailing = rule({
  findings: { "kube-proxy-cleanup-failing": { severity: "error", stage: "any" } },
  needs: ["kubeProxyMetrics", "proxyMode"],
  evaluate({ facts, view: { runningMode } }) {
    if (runningMode === null) return [];
    const v = counterValue(readCounter(facts, runningMode, CLEANUP_FAILURE_COUNTER));
    if (v === null || v <= 0) return [];
    return [
      {
        id: "kube-proxy-cleanup-failing",
        severity: "error",
        stage: "any",
        blocksMigration: false,
        title: `kube-proxy's cleanup of stale nftables state has failed ${v} times`,
        evidence: { [CLEANUP_FAILURE_COUNTER]: v },
        remedy:
          "Usually leftovers of the previous mode or something else writing into kube-proxy's tables: check the log and run proxyscope-agent cleanup (dry run first)",
        reference: REF.verify,
      },
    ];
  },
});
