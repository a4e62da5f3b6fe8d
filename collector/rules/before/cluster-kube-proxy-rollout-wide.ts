import { rule } from "../rule.js";

/** A rolling update that restarts many kube-proxy pods at once is a fleet-wide change of data plane. */
export const rolloutWide = rule({
  findings: { "cluster-kube-proxy-rollout-wide": { severity: "warning", stage: "before" } },
  needs: ["kubeProxyDaemonSet"],
  evaluate({ facts }) {
    const ds = facts.kubeProxyDaemonSet;
    if (!ds || ds.updateStrategy !== "RollingUpdate") return [];
    const mu = ds.maxUnavailable ?? 1;
    if (mu === 1 || mu === "1") return [];
    return [
      {
        id: "cluster-kube-proxy-rollout-wide",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title: `kube-proxy's DaemonSet rolls with maxUnavailable ${mu}: a ConfigMap change restarts many nodes at once`,
        evidence: { updateStrategy: ds.updateStrategy, maxUnavailable: mu },
        remedy:
          'Before the switch: kubectl -n kube-system patch ds kube-proxy -p \'{"spec":{"updateStrategy":{"rollingUpdate":{"maxUnavailable":1}}}}\' (or OnDelete), then restart one node\'s pod by hand',
      },
    ];
  },
});
