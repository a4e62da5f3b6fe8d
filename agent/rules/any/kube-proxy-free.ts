import { rule } from "../rule.js";

export const kubeProxyFree = rule({
  findings: { "kube-proxy-free": { severity: "info", stage: "any" } },
  needs: [],
  evaluate({ view: { phase, inferred } }) {
    if (phase !== "none" || inferred) return [];
    return [
      {
        id: "kube-proxy-free",
        severity: "info",
        stage: "any",
        blocksMigration: false,
        title:
          "No kube-proxy answers here and the kernel holds no kube-proxy state: nothing to migrate on this node",
        evidence: {},
        remedy:
          "None. If a CNI (Cilium, Calico eBPF) implements Services here, the ipvs deprecation does not reach this node",
      },
    ];
  },
});
