import { LAST_QUEUED, LAST_SYNC, timestamp } from "../../view/counters.js";
import { rule } from "../rule.js";

export const rulesStale = rule({
  findings: { "kube-proxy-rules-stale": { severity: "critical", stage: "any" } },
  needs: ["kubeProxyMetrics", "proxyMode"],
  evaluate({ facts, now, view: { runningMode, lastSync: last } }, opts) {
    if (runningMode === null) return [];
    const queued = timestamp(facts, LAST_QUEUED, "newest");
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
          [LAST_SYNC]: last,
          [LAST_QUEUED]: queued,
          thresholdSeconds: opts.staleAfterS,
        },
        remedy:
          "Restart kube-proxy on this node and read its log; the node's Service rules are drifting from the API server",
      },
    ];
  },
});
