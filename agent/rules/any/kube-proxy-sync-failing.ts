import {
  counterTrend,
  counterValue,
  describeCounter,
  readCounter,
  SYNC_FAILURE_COUNTERS,
} from "../../view/counters.js";
import { rule } from "../rule.js";

export const syncFailing = rule({
  findings: {
    "kube-proxy-sync-failing": { severity: "critical", stage: "any" },
    "kube-proxy-sync-failed-earlier": { severity: "info", stage: "any" },
  },
  needs: ["kubeProxyMetrics", "proxyMode"],
  evaluate({ facts, now, previous, view: { runningMode, lastSync } }, opts) {
    if (runningMode === null) return [];
    const failing = SYNC_FAILURE_COUNTERS.map((n) => [n, readCounter(facts, runningMode, n)] as const).filter(
      ([, r]) => (counterValue(r) ?? 0) > 0,
    );
    if (failing.length === 0) return [];
    // The counters are cumulative since kube-proxy started: current only when one rose since the previous
    // scan, or the last successful sync is stale (the alerts use rate() for the same reason).
    const trends = failing.map(([n]) => [n, counterTrend(facts, previous, runningMode, n)] as const);
    const age = lastSync === null ? null : Math.round(now - lastSync);
    const stale = age !== null && age > opts.staleAfterS;
    const rose = trends.some(([, t]) => t.trend === "rose");
    const evidence = {
      ...Object.fromEntries(failing.map(([n, r]) => [n, describeCounter(r)])),
      ...Object.fromEntries(
        trends.map(([n, t]) => [
          `${n} (previous scan)`,
          t.before ?? (previous === null ? "no previous scan" : "not comparable (mode changed or not read)"),
        ]),
      ),
      lastSyncAgeSeconds: age,
    };
    if (rose || stale) {
      return [
        {
          id: "kube-proxy-sync-failing",
          severity: "critical",
          stage: "any",
          blocksMigration: false,
          title: rose
            ? "kube-proxy's rule syncs are failing: its failure counter rose since the previous scan"
            : `kube-proxy has failed to sync and its last successful sync was ${age} s ago`,
          evidence,
          remedy:
            "Read kube-proxy's log on this node for the failing sync; the node's Service rules are drifting from the API server",
        },
      ];
    }
    return [
      {
        id: "kube-proxy-sync-failed-earlier",
        severity: "info",
        stage: "any",
        blocksMigration: false,
        title:
          previous === null
            ? `kube-proxy has failed to sync since it started, and its last successful sync is recent (one scan cannot tell whether it still fails; the agent in serve mode compares scans)`
            : "kube-proxy failed to sync earlier; none since the previous scan and its last successful sync is recent",
        evidence,
        remedy:
          "Nothing to do now; if it recurs (rate(...[5m]) > 0, or this finding turns into kube-proxy-sync-failing) read kube-proxy's log",
      },
    ];
  },
});
