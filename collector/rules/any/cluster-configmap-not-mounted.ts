import { rule } from "../rule.js";

export const configMapNotMounted = rule({
  findings: { "cluster-configmap-not-mounted": { severity: "warning", stage: "any" } },
  needs: ["kubeProxyDaemonSet", "kubeProxyConfigMap"],
  evaluate({ facts }) {
    const ds = facts.kubeProxyDaemonSet;
    const cm = facts.kubeProxyConfigMap;
    if (!ds || !cm || ds.configMapVolumes.length === 0 || ds.configMapVolumes.includes(cm.name)) return [];
    return [
      {
        id: "cluster-configmap-not-mounted",
        severity: "warning",
        stage: "any",
        blocksMigration: false,
        title: `The DaemonSet mounts ${ds.configMapVolumes.join(", ")}, not the ConfigMap ${cm.name} we read`,
        evidence: { mounted: ds.configMapVolumes, read: cm.name },
        remedy: "Find which ConfigMap feeds --config and change that one",
      },
    ];
  },
});
