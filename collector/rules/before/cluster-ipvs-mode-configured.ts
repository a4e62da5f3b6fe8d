import { CONFIG_SOURCE_NEEDS } from "../../checks/config-source.js";
import { configuredMode } from "../../checks/proxy-config.js";
import { rule } from "../rule.js";

export const ipvsConfigured = rule({
  findings: { "cluster-ipvs-mode-configured": { severity: "warning", stage: "before" } },
  needs: CONFIG_SOURCE_NEEDS,
  evaluate({ facts }) {
    const mode = configuredMode(facts);
    if (mode !== "ipvs") return [];
    const cfg = facts.kubeProxyConfigMap?.config;
    return [
      {
        id: "cluster-ipvs-mode-configured",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title: "kube-proxy is configured for the deprecated ipvs mode",
        evidence: {
          mode,
          scheduler: cfg?.ipvs?.scheduler ?? null,
          strictARP: cfg?.ipvs?.strictARP ?? null,
        },
        remedy:
          "Plan the move to nftables mode (or iptables on nodes whose kernel is older than 5.13): pin, check kernels, measure, canary, then pools",
      },
    ];
  },
});
