import { listed, rule } from "../rule.js";

const LOCAL_SET = /^KUBE-(6-)?(LOAD-BALANCER-LOCAL|EXTERNAL-IP-LOCAL|NODE-PORT-LOCAL-)/;

/**
 * ipvs mode gives the LB-IP, externalIP and NodePort virtual servers of an externalTrafficPolicy: Local
 * Service only this node's endpoints, whoever connects (pkg/proxy/ipvs/proxier.go v1.34.4,
 * `syncEndpoint(svcPortName, svcInfo.ExternalPolicyLocal(), serv)`). nftables mode sends pod and host
 * clients of the same destinations to all endpoints ("Treat all locally-originated pod -> external
 * destination traffic as a special-case. It is subject to neither form of traffic policy";
 * `fib saddr type local … goto clusterPolicyChain`, pkg/proxy/nftables/proxier.go v1.34.4). In-cluster callers
 * seen here start crossing nodes (and zones) at the switch: a behaviour change, not an outage.
 */
export const etpLocalInClusterCallers = rule({
  findings: { "etp-local-in-cluster-callers": { severity: ["warning", "info"], stage: "before" } },
  needs: ["serviceConntrack"],
  evaluate({ facts, view }, opts) {
    const sc = facts.serviceConntrack;
    if (view.phase !== "ipvs" || !sc) return [];
    const seen = sc.etpLocalFromInside;
    const change =
      "ipvs mode keeps in-cluster callers of these destinations on this node's endpoints; nftables mode sends them to all endpoints";
    const remedy =
      "Find the in-cluster callers of these LoadBalancer IPs, externalIPs or NodePorts (`conntrack -L -d <address> -p tcp --dport <port>`); if one relies on a node-local endpoint, have it call the ClusterIP of a Service with internalTrafficPolicy: Local, or accept the spread, before switching";
    if (!seen.read) {
      // Unknown, never none: said only where kube-proxy's sets hold an ETP Local destination (or are unread).
      const sets = facts.ipsets?.sets.filter((s) => s.kubeProxy && LOCAL_SET.test(s.name)) ?? null;
      if (sets !== null && !sets.some((s) => s.entries > 0)) return [];
      return [
        {
          id: "etp-local-in-cluster-callers",
          severity: "info",
          stage: "before",
          blocksMigration: false,
          title:
            "Whether in-cluster callers use this node's externalTrafficPolicy: Local destinations was not measured: nftables mode would send them to all endpoints",
          evidence: { connections: `not read: ${seen.why}`, ipvs: change },
          remedy,
        },
      ];
    }
    if (seen.to.length === 0) return [];
    const total = seen.to.reduce((n, d) => n + d.connections, 0);
    return [
      {
        id: "etp-local-in-cluster-callers",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title: `${total} in-cluster connections to ${seen.destinations} externalTrafficPolicy: Local destinations stay on this node's endpoints in ipvs mode; nftables mode sends them to all endpoints`,
        evidence: {
          connections: listed(
            seen.to.map((d) => `${d.destination} (${d.connections} connections)`),
            opts.maxListed,
          ),
          destinations: seen.destinations,
          inside: seen.inside,
          ipvs: change,
        },
        remedy,
      },
    ];
  },
});
