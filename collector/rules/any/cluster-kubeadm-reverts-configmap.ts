import { rule } from "../rule.js";

export const kubeadmRevertsConfigMap = rule({
  findings: { "cluster-kubeadm-reverts-configmap": { severity: "info", stage: "any" } },
  needs: ["kubeadm", "kubeProxyConfigMap"],
  evaluate({ facts }) {
    if (!facts.kubeadm || !facts.kubeProxyConfigMap) return [];
    return [
      {
        id: "cluster-kubeadm-reverts-configmap",
        severity: "info",
        stage: "any",
        blocksMigration: false,
        title:
          "kubeadm manages this cluster: a kubectl edit of the kube-proxy ConfigMap is reverted by the next `kubeadm upgrade`",
        evidence: { kubeadmConfig: "kube-system/kubeadm-config" },
        remedy:
          "Make every kube-proxy change in kubeadm's configuration too (the KubeProxyConfiguration passed to kubeadm), not only in the ConfigMap",
      },
    ];
  },
});
