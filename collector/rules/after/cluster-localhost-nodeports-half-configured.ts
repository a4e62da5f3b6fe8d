import { effectiveGates } from "../../checks/proxy-config.js";
import { CONFIG_SOURCE_NEEDS, nodePortAddressesInUse } from "../../checks/config-source.js";
import { rule } from "../rule.js";

export const localhostNodePortsHalfConfigured = rule({
  findings: { "cluster-localhost-nodeports-half-configured": { severity: "warning", stage: "after" } },
  needs: CONFIG_SOURCE_NEEDS,
  evaluate({ facts }) {
    if (effectiveGates(facts).KubeProxyNFTablesLocalhostNodePorts !== true) return [];
    // Not read is not "without localhost".
    const npa = nodePortAddressesInUse(facts);
    if (npa === null || npa.includes("localhost")) return [];
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
