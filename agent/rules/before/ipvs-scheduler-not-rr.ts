import { rule } from "../rule.js";

export const ipvsScheduler = rule({
  findings: { "ipvs-scheduler-not-rr": { severity: "info", stage: "before" } },
  needs: ["configz", "ipvs"],
  evaluate({ facts, view: { phase } }) {
    if (phase !== "ipvs") return [];
    const configured = facts.configz?.ipvs.scheduler ?? "";
    const seen = Object.keys(facts.ipvs?.schedulers ?? {}).filter((s) => s !== "rr");
    if ((configured === "" || configured === "rr") && seen.length === 0) return [];
    return [
      {
        id: "ipvs-scheduler-not-rr",
        severity: "info",
        stage: "before",
        blocksMigration: false,
        title: `IPVS scheduler ${configured || seen.join(", ")} has no nftables equivalent (balancing becomes random)`,
        evidence: { configured: configured || null, schedulersInTable: seen, perService: false },
        remedy:
          "Nothing is lost that worked: lc counted only this node's connections and every real server has weight 1. For stickiness use Service sessionAffinity: ClientIP; for locality internalTrafficPolicy: Local",
      },
    ];
  },
});
