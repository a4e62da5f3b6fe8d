import { rule } from "../rule.js";

export const configMapNotUsed = rule({
  findings: { "cluster-configmap-not-used": { severity: "warning", stage: "any" } },
  needs: ["kubeProxyDaemonSet", "kubeProxyConfigMap"],
  evaluate({ facts }) {
    const ds = facts.kubeProxyDaemonSet;
    const cm = facts.kubeProxyConfigMap;
    if (!ds || !cm || ds.configFlag !== null) return [];
    return [
      {
        id: "cluster-configmap-not-used",
        severity: "warning",
        stage: "any",
        blocksMigration: false,
        title: "The kube-proxy DaemonSet passes no --config: the ConfigMap is not what kube-proxy reads",
        evidence: { argv: ds.argv, configMap: cm.name },
        remedy: "Edit the flags of the DaemonSet (or your installer's values), not the ConfigMap",
      },
    ];
  },
});
