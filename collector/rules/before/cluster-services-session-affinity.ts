import { SAMPLE, serviceInventory } from "../../checks/services.js";
import { rule } from "../rule.js";

export const sessionAffinity = rule({
  findings: { "cluster-services-session-affinity": { severity: "info", stage: "before" } },
  needs: ["services"],
  evaluate({ facts }) {
    const clientIP = serviceInventory(facts).sessionAffinityClientIP;
    if (clientIP.length === 0) return [];
    return [
      {
        id: "cluster-services-session-affinity",
        severity: "info",
        stage: "before",
        blocksMigration: false,
        title: `${clientIP.length} Service(s) use sessionAffinity: ClientIP — it survives the migration; verify them on the canary`,
        evidence: { services: clientIP.slice(0, SAMPLE), count: clientIP.length },
        remedy: "Nothing to change; include one of these Services in the canary's connection checks",
      },
    ];
  },
});
