import { NFTABLES_MIN_KERNEL } from "../../parse/versions.js";
import { kernelAdvice } from "../kernel-advice.js";
import { rule } from "../rule.js";

const REQUIRED = NFTABLES_MIN_KERNEL.join(".");

export const kernelTooOld = rule({
  findings: { "kernel-too-old-for-nftables": { severity: "error", stage: "before" } },
  needs: ["kernel", "osRelease"],
  evaluate({ facts, view: { phase, kernelNftablesCapable } }) {
    const k = facts.kernel;
    if (!k || phase === "nftables" || phase === "none") return [];
    if (kernelNftablesCapable !== false) return [];
    return [
      {
        id: "kernel-too-old-for-nftables",
        severity: "error",
        stage: "before",
        blocksMigration: true,
        title: `Kernel ${k.release} is older than ${REQUIRED}: kube-proxy will not start in nftables mode`,
        evidence: { kernel: k.release, required: REQUIRED, os: facts.osRelease?.prettyName ?? null },
        remedy: kernelAdvice(facts.osRelease),
      },
    ];
  },
});
