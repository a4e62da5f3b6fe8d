import { rule } from "../rule.js";

export const configUnreadable = rule({
  findings: { "cluster-kube-proxy-config-unreadable": { severity: "warning", stage: "any" } },
  needs: ["kubeProxyConfigMap"],
  evaluate({ facts }) {
    const cm = facts.kubeProxyConfigMap;
    if (!cm || cm.config !== null) return [];
    return [
      {
        id: "cluster-kube-proxy-config-unreadable",
        severity: "warning",
        stage: "any",
        blocksMigration: false,
        title: `The kube-proxy ConfigMap could not be read as a KubeProxyConfiguration: ${cm.parseError ?? "no config key"}`,
        evidence: { configMap: cm.name, key: cm.key, error: cm.parseError },
        remedy: `Check the ConfigMap by hand: kubectl -n kube-system get configmap ${cm.name} -o yaml`,
      },
    ];
  },
});
