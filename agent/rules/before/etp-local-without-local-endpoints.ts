import { gauge } from "../../view/counters.js";
import { rule } from "../rule.js";

const GAUGE = "kubeproxy_sync_proxy_rules_no_local_endpoints_total";

export const etpLocalWithoutEndpoints = rule({
  findings: { "etp-local-without-local-endpoints": { severity: "warning", stage: "before" } },
  needs: ["kubeProxyMetrics"],
  evaluate({ facts, view: { phase } }) {
    if (phase !== "ipvs") return [];
    const n = gauge(facts, GAUGE);
    if (n === null || n <= 0) return [];
    return [
      {
        id: "etp-local-without-local-endpoints",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title: `${n} Services with a Local traffic policy have no endpoint on this node: ipvs mode forwards their external traffic elsewhere, nftables mode drops it`,
        evidence: { [GAUGE]: n },
        remedy:
          "Check those Services' externalTrafficPolicy: Local and where their pods run before switching this node",
      },
    ];
  },
});
