import { SAMPLE, serviceInventory } from "../../checks/services.js";
import { rule } from "../rule.js";

// Two changes (pkg/proxy/ipvs/proxier.go and pkg/proxy/nftables/proxier.go, v1.34.4): ipvs applies the Local
// policy to LB-IP, externalIP and NodePort virtual servers whoever connects (syncEndpoint(…,
// ExternalPolicyLocal(), …)), nftables short-circuits pod and host clients to all endpoints; and with no
// local endpoint ipvs falls back to all endpoints (k/k#97081) where nftables drops external traffic.
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
        title: `${local.length} Service(s) use externalTrafficPolicy: Local — in nftables mode in-cluster callers of their LB IPs, externalIPs and NodePorts go to all endpoints (ipvs kept them on the node's own), and external traffic to a node without a local endpoint is dropped (ipvs forwarded it)`,
        evidence: { services: local.slice(0, SAMPLE), count: local.length },
        remedy:
          "Check that load balancers health-check these Services' healthCheckNodePort, so traffic only lands on nodes with endpoints; and that in-cluster callers of their LB IPs, externalIPs or NodePorts do not rely on a node-local endpoint (the nodes name the ones they saw: etp-local-in-cluster-callers)",
      },
    ];
  },
});
