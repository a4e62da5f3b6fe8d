import { SAMPLE, serviceInventory } from "../../checks/services.js";
import type { ApiService } from "../../report/cluster-facts.js";
import { rule } from "../rule.js";

const ref = (s: ApiService) => `${s.namespace}/${s.name}`;

// A client can reach these at more than one address (a NodePort on each node address, an LB IP, an
// externalIP, a second family's ClusterIP): there the two modes' affinity visibly differs.
const severalAddresses = (s: ApiService) =>
  s.clusterIPs.length > 1 ||
  s.ports.some((p) => p.nodePort !== null) ||
  (s.externalIPs ?? []).length > 0 ||
  (s.loadBalancerIPs ?? []).length > 0;

/**
 * ipvs mode makes each of a Service's virtual servers persistent on its own (pkg/proxy/ipvs/proxier.go
 * v1.34.4, FlagPersistent with Timeout = StickyMaxAgeSeconds on the ClusterIP, each NodePort address, each
 * externalIP and LB IP); IPVS keeps a client's template while its connections last. nftables mode keeps one
 * affinity set per endpoint keyed by client IP "without regard to which service IP was used" and refreshes
 * its timeout on each new connection (pkg/proxy/nftables/proxier.go v1.34.4, affinity-* sets, `update @`),
 * as iptables mode does: KEP-3866 Non-Goals, "the same behavior as iptables … different from ipvs".
 */
export const sessionAffinity = rule({
  findings: { "cluster-services-session-affinity": { severity: "info", stage: "before" } },
  needs: ["services"],
  evaluate({ facts }) {
    const clientIP = serviceInventory(facts).sessionAffinityClientIP;
    if (clientIP.length === 0) return [];
    const several = facts.services
      .filter((s) => s.sessionAffinity === "ClientIP" && severalAddresses(s))
      .map(ref);
    return [
      {
        id: "cluster-services-session-affinity",
        severity: "info",
        stage: "before",
        blocksMigration: false,
        title: `${clientIP.length} Service(s) use sessionAffinity: ClientIP — nftables mode keeps one affinity per endpoint across all of a Service's IPs, timed from the client's last new connection, instead of one per IPVS virtual server (ClusterIP, each NodePort address, each LoadBalancer IP) held while its connections last`,
        evidence: {
          services: clientIP.slice(0, SAMPLE),
          count: clientIP.length,
          reachedAtSeveralAddresses: several.slice(0, SAMPLE),
          reachedAtSeveralAddressesCount: several.length,
        },
        remedy:
          "Nothing to change in the Services. On the canary, check the clients of those reached at several addresses (a client using both the ClusterIP and the LoadBalancer IP or a NodePort now sticks to one endpoint for all of them) and those with long-lived connections that open new ones rarely (the affinity now lapses timeoutSeconds after the last new connection, even while an old one is still open)",
      },
    ];
  },
});
