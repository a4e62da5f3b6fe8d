import { HOW_TO_CONFIRM } from "../guess.js";
import { rule } from "../rule.js";

export const kubeProxyNotAnswering = rule({
  findings: { "kube-proxy-not-answering": { severity: "error", stage: "any" } },
  needs: ["proxyMode", "configz"],
  evaluate({ facts, failedProbes, view }) {
    const { phase, runningMode, inferred, carrying, answeredMode } = view;
    if (runningMode !== null || (phase === "none" && !inferred)) return [];
    if (!failedProbes.has("kube-proxy-mode") && answeredMode === null) return [];
    const said = answeredMode === "" ? "answers /proxyMode with nothing" : "does not answer /proxyMode";
    return [
      {
        id: "kube-proxy-not-answering",
        severity: "error",
        stage: "any",
        blocksMigration: false,
        title:
          phase === "unknown"
            ? `kube-proxy ${said} and the kernel state does not tell the mode`
            : phase === "none"
              ? `kube-proxy ${said}; the kernel holds kube-proxy state but none of it carries Service traffic (phase inferred: none)`
              : `kube-proxy ${said}; the phase (${phase}) is inferred from the kernel state that carries traffic`,
        evidence: {
          inferredPhase: phase,
          carryingTraffic: carrying.map((c) => `${c.mode}: ${c.evidence}`),
          configuredMode: facts.configz?.mode ?? null,
        },
        remedy: `Confirm first what runs on this node: ${HOW_TO_CONFIRM}. Then check proxyscope's --kube-proxy-metrics-url (kube-proxy's metricsBindAddress); until kube-proxy answers, no finding here is a reason to delete state`,
      },
    ];
  },
});
