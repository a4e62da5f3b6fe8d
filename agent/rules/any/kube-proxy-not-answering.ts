import { REF } from "../references.js";
import { rule } from "../rule.js";

export const kubeProxyNotAnswering = rule({
  findings: { "kube-proxy-not-answering": { severity: "error", stage: "any" } },
  needs: ["proxyMode", "configz"],
  evaluate({ facts, failedProbes, view: { phase, runningMode } }) {
    if (runningMode !== null || phase === "none") return [];
    if (!failedProbes.has("kube-proxy-mode")) return [];
    return [
      {
        id: "kube-proxy-not-answering",
        severity: "error",
        stage: "any",
        blocksMigration: false,
        title:
          phase === "unknown"
            ? "kube-proxy does not answer and the kernel state does not tell the mode"
            : `kube-proxy does not answer /proxyMode, though the kernel holds ${phase}-mode state`,
        evidence: { inferredPhase: phase, configuredMode: facts.configz?.mode ?? null },
        remedy:
          "Check the kube-proxy pod on this node, and proxyscope's --kube-proxy-metrics-url (kube-proxy's metricsBindAddress)",
        reference: REF.verify,
      },
    ];
  },
});
