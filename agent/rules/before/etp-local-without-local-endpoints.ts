import { gauge } from "../../view/counters.js";
import { rule } from "../rule.js";

const GAUGE = "kubeproxy_sync_proxy_rules_no_local_endpoints_total";

// Both policies change with the switch. ipvs (pkg/proxy/ipvs/proxier.go syncEndpoint): with a Local policy and
// no local endpoint it uses the cluster's endpoints, for internalTrafficPolicy and externalTrafficPolicy alike
// (k/k#97081). nftables (pkg/proxy/nftables/proxier.go): no internal endpoints -> the ClusterIP's traffic from
// this node is dropped; no external endpoints -> external traffic dropped. The gauge carries traffic_policy
// "internal" / "external" (both set on every sync by either proxier).
export const etpLocalWithoutEndpoints = rule({
  findings: { "etp-local-without-local-endpoints": { severity: "warning", stage: "before" } },
  needs: ["kubeProxyMetrics"],
  evaluate({ facts, view: { phase } }) {
    if (phase !== "ipvs") return [];
    const n = gauge(facts, GAUGE);
    if (n === null || n <= 0) return [];
    const split = facts.kubeProxyMetrics?.metrics[GAUGE]?.byLabel?.["traffic_policy"];
    const internal = split?.["internal"] ?? null;
    const external = split?.["external"] ?? null;
    const which =
      split === undefined
        ? "internal or external"
        : [internal ? "internal" : null, external ? "external" : null].filter(Boolean).join(" and ");
    return [
      {
        id: "etp-local-without-local-endpoints",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title: `Services with a Local traffic policy (${which}) have no endpoint on this node: ipvs mode sends that traffic to other nodes' endpoints, nftables mode drops it`,
        evidence: {
          [GAUGE]: n,
          internalTrafficPolicyLocal: internal ?? "not split (no traffic_policy label read)",
          externalTrafficPolicyLocal: external ?? "not split (no traffic_policy label read)",
          ipvs: "falls back to the cluster's endpoints for both policies (pkg/proxy/ipvs/proxier.go, k/k#97081)",
          nftables:
            "drops ClusterIP traffic from this node (internal) and external traffic (external) with no local endpoint",
        },
        remedy:
          'List the Services with internalTrafficPolicy: Local or externalTrafficPolicy: Local (kubectl get svc -A -o json | jq \'.items[] | select(.spec.internalTrafficPolicy=="Local" or .spec.externalTrafficPolicy=="Local") | .metadata.namespace+"/"+.metadata.name\') and make sure each has a ready pod on this node, or its clients do not rely on the fallback, before switching this node',
      },
    ];
  },
});
