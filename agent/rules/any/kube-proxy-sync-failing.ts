import { counterValue, describeCounter, readCounter, SYNC_FAILURE_COUNTERS } from "../../view/counters.js";
import { REF } from "../references.js";
import { rule } from "../rule.js";

export const syncFailing = rule({
  findings: { "kube-proxy-sync-failing": { severity: "critical", stage: "any" } },
  needs: ["kubeProxyMetrics", "proxyMode"],
  evaluate({ facts, view: { runningMode } }) {
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
  },
});
