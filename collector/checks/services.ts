import type { ApiService, ClusterFacts } from "../report/cluster-facts.js";
import type { FleetReport } from "../report/schema.js";
import type { CheckFinding } from "./references.js";

const ref = (s: ApiService) => `${s.namespace}/${s.name}`;
// A finding's evidence stays readable at any fleet size; the full list is in the report's cluster.services.
const SAMPLE = 50;

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

export function serviceFindings(facts: ClusterFacts, inv = serviceInventory(facts)): CheckFinding[] {
  const out: CheckFinding[] = [];
  if (inv.sessionAffinityClientIP.length > 0)
    out.push({
      id: "cluster-services-session-affinity",
      severity: "info",
      stage: "before",
      blocksMigration: false,
      title: `${inv.sessionAffinityClientIP.length} Service(s) use sessionAffinity: ClientIP — it survives the migration; verify them on the canary`,
      evidence: {
        services: inv.sessionAffinityClientIP.slice(0, SAMPLE),
        count: inv.sessionAffinityClientIP.length,
      },
      remedy: "Nothing to change; include one of these Services in the canary's connection checks",
    });
  if (inv.nodePorts.length > 0) {
    const npa = facts.kubeProxyConfigMap?.config?.nodePortAddresses ?? null;
    const unrestricted = npa === null || npa.length === 0;
    out.push({
      id: "cluster-nodeport-inventory",
      severity: unrestricted ? "warning" : "info",
      stage: "before",
      blocksMigration: false,
      title: unrestricted
        ? `${inv.nodePorts.length} NodePort(s) answer on every node address today; nftables mode serves them on the primary address only`
        : `${inv.nodePorts.length} NodePort(s); nodePortAddresses is ${npa!.join(", ")}`,
      evidence: {
        nodePortAddresses: npa ?? [],
        nodePorts: [...new Set(inv.nodePorts.map((p) => `${p.nodePort}/${p.protocol}`))].slice(0, SAMPLE),
        count: inv.nodePorts.length,
      },
      remedy:
        "Before the switch, find out whether anything reaches these NodePorts on a secondary address, a VIP or 127.0.0.1 (the node reports' nodeport-addresses-shrink and localhost counters say); if so set nodePortAddresses explicitly",
    });
  }
  if (inv.externalTrafficPolicyLocal.length > 0)
    out.push({
      id: "cluster-services-etp-local",
      severity: "info",
      stage: "before",
      blocksMigration: false,
      title: `${inv.externalTrafficPolicyLocal.length} Service(s) use externalTrafficPolicy: Local — on a node without a local endpoint ipvs forwards, nftables drops`,
      evidence: {
        services: inv.externalTrafficPolicyLocal.slice(0, SAMPLE),
        count: inv.externalTrafficPolicyLocal.length,
      },
      remedy:
        "Check that load balancers health-check these Services' healthCheckNodePort, so traffic only lands on nodes with endpoints",
    });
  return out;
}
