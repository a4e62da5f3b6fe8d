import { CONFIG_SOURCE_NEEDS, configSource } from "../../checks/config-source.js";
import { rule } from "../rule.js";

export const noKubeProxy = rule({
  findings: { "cluster-no-kube-proxy": { severity: "info", stage: "any" } },
  needs: [...CONFIG_SOURCE_NEEDS, "observed"],
  evaluate({ facts, observed }) {
    if (configSource(facts, observed).kind !== "none") return [];
    return [
      {
        id: "cluster-no-kube-proxy",
        severity: "info",
        stage: "any",
        blocksMigration: false,
        title:
          "No kube-proxy DaemonSet, ConfigMap or static pod in kube-system: the CNI may implement Services itself",
        evidence: { daemonSet: null, configMap: null },
        remedy:
          "If a CNI (Cilium, Calico eBPF) replaces kube-proxy, none of this deprecation applies; the node reports say which nodes still run a proxy",
      },
    ];
  },
});
