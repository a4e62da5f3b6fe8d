import { CONFIG_SOURCE_NEEDS, configSource, sourceRemedy } from "../../checks/config-source.js";
import { rule } from "../rule.js";

export const configSourceRule = rule({
  findings: { "cluster-config-source": { severity: "info", stage: "any" } },
  needs: [...CONFIG_SOURCE_NEEDS, "observed"],
  evaluate({ facts, observed }) {
    const src = configSource(facts, observed);
    if (src.kind === "none") return [];
    return [
      {
        id: "cluster-config-source",
        severity: "info",
        stage: "any",
        blocksMigration: false,
        title: `kube-proxy's mode comes from ${src.where}`,
        evidence: {
          kind: src.kind,
          pin: src.pin,
          mode: src.mode,
          distribution: src.distribution,
          distributionEvidence: src.distributionEvidence,
          configMap: src.configMap,
          key: src.key,
          read: src.read,
          proxyModeFlags: src.proxyModeFlags,
          mirrorPods: src.mirrorPods,
          nodesAnswered: src.nodesAnswered,
        },
        remedy: `To pin or change the mode here: ${sourceRemedy(src)}`,
      },
    ];
  },
});
