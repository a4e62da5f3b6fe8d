import { effectiveGates } from "../../checks/proxy-config.js";
import { rule } from "../rule.js";

export const localhostNodePortsHalfConfigured = rule({
  findings: { "cluster-localhost-nodeports-half-configured": { severity: "warning", stage: "after" } },
  needs: ["kubeProxyConfigMap", "kubeProxyDaemonSet"],
  evaluate({ facts }) {
    if (effectiveGates(facts).KubeProxyNFTablesLocalhostNodePorts !== true) return [];
    const npa = facts.kubeProxyConfigMap?.config?.nodePortAddresses ?? [];
    if (npa.includes("localhost")) return [];
    return [
      {
        id: "cluster-localhost-nodeports-half-configured",
        severity: "warning",
        stage: "after",
        blocksMigration: false,
        title:
          "KubeProxyNFTablesLocalhostNodePorts is on but nodePortAddresses does not include localhost: both halves are needed",
        evidence: { nodePortAddresses: npa },
        remedy: 'Set nodePortAddresses: ["primary", "localhost"] alongside the gate (1.37+)',
      },
    ];
  },
});
