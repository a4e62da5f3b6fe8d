import { SAMPLE, serviceInventory } from "../../checks/services.js";
import { rule } from "../rule.js";

export const servicesEtpLocal = rule({
  findings: { "cluster-services-etp-local": { severity: "info", stage: "before" } },
  needs: ["services"],
  evaluate({ facts }) {
    const local = serviceInventory(facts).externalTrafficPolicyLocal;
    if (local.length === 0) return [];
    return [
      {
        id: "cluster-services-etp-local",
        severity: "info",
        stage: "before",
        blocksMigration: false,
        title: `${local.length} Service(s) use externalTrafficPolicy: Local — on a node without a local endpoint ipvs forwards, nftables drops`,
        evidence: { services: local.slice(0, SAMPLE), count: local.length },
        remedy:
          "Check that load balancers health-check these Services' healthCheckNodePort, so traffic only lands on nodes with endpoints",
      },
    ];
  },
});
