import type { ApiService, ClusterFacts } from "../report/cluster-facts.js";
import type { FleetReport } from "../report/schema.js";

const ref = (s: ApiService) => `${s.namespace}/${s.name}`;
// A finding's evidence stays readable at any fleet size; the full list is in the report's cluster.services.
export const SAMPLE = 50;

/** The Services the migration changes something for, listed in full in the report's cluster.services. */
export function serviceInventory(facts: ClusterFacts): FleetReport["cluster"]["services"] {
  const svcs = facts.services;
  return {
    total: svcs.length,
    nodePorts: svcs.flatMap((s) =>
      s.ports.flatMap((p) =>
        p.nodePort !== null
          ? [{ service: ref(s), type: s.type, port: p.port, nodePort: p.nodePort, protocol: p.protocol }]
          : [],
      ),
    ),
    sessionAffinityClientIP: svcs.filter((s) => s.sessionAffinity === "ClientIP").map(ref),
    internalTrafficPolicyLocal: svcs.filter((s) => s.internalTrafficPolicy === "Local").map(ref),
    externalTrafficPolicyLocal: svcs.filter((s) => s.externalTrafficPolicy === "Local").map(ref),
  };
}
