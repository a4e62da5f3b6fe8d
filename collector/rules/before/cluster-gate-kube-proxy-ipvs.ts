import { effectiveGates } from "../../checks/proxy-config.js";
import { rule } from "../rule.js";

export const gateKubeProxyIpvs = rule({
  findings: { "cluster-gate-kube-proxy-ipvs": { severity: "warning", stage: "before" } },
  needs: ["kubeProxyConfigMap", "kubeProxyDaemonSet"],
  evaluate({ facts }) {
    const gates = effectiveGates(facts);
    if (!("KubeProxyIPVS" in gates)) return [];
    return [
      {
        id: "cluster-gate-kube-proxy-ipvs",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title: `KubeProxyIPVS is set to ${gates.KubeProxyIPVS}: ${gates.KubeProxyIPVS ? "an override that buys three releases and stops working in 1.43" : "ipvs mode is switched off"}`,
        evidence: { KubeProxyIPVS: gates.KubeProxyIPVS ?? null },
        remedy: "Treat the gate as a deadline, not a plan: migrate, then remove it from featureGates",
      },
    ];
  },
});
