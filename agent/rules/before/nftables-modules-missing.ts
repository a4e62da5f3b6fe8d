import { rule } from "../rule.js";

export const nftModulesMissing = rule({
  findings: { "nftables-modules-missing": { severity: "error", stage: "before" } },
  needs: ["kernelModules", "kernel"],
  evaluate({ facts, view: { phase } }) {
    const m = facts.kernelModules;
    if (!m || !m.moduleTreeReadable || phase === "none") return [];
    const absent = m.modules.filter((x) => x.state === "absent").map((x) => x.name);
    if (absent.length === 0) return [];
    return [
      {
        id: "nftables-modules-missing",
        severity: "error",
        stage: "before",
        blocksMigration: phase !== "nftables",
        title: `Kernel modules nftables mode needs are neither loaded, built in nor installed: ${absent.join(", ")}`,
        evidence: { missing: absent, kernel: facts.kernel?.release ?? null },
        remedy:
          "Install the kernel's netfilter modules (e.g. linux-modules-extra on Ubuntu cloud images) or rebuild the node image",
      },
    ];
  },
});
