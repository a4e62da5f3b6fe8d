import { MEASURE_IDS } from "../../agent/contract.js";
import { serviceInventory } from "../checks/services.js";
import type { PlanStep } from "../report/schema.js";
import { names, type FleetState } from "./fleet-state.js";

/**
 * Step 3: the localhost-NodePort and conntrack counters and the NodePort address inventory. The nodes
 * the agent flagged with a measure-before-switch finding, and the listed nodes nobody measured.
 */
export function countersAndNodePortsStep(s: FleetState): PlanStep {
  const flagged = s.answered.filter((n) => n.findings.some((f) => MEASURE_IDS.has(f.id)));
  const unmeasured = s.nodes.filter((n) => n.outcome !== "ok" && n.listedByApi !== false);
  return {
    step: 3,
    id: "counters-and-nodeports",
    title: "Read the localhost-NodePort and conntrack counters; inventory NodePort addresses",
    status: !s.migrationOpen ? "n/a" : flagged.length > 0 || unmeasured.length > 0 ? "todo" : "done",
    detail: [
      flagged.length > 0
        ? `${flagged.length} node(s) rely on localhost NodePorts, the conntrack workaround, secondary-address NodePorts or a host firewall: decide nodePortAddresses / --conntrack-tcp-be-liberal first`
        : "",
      unmeasured.length > 0 ? `${unmeasured.length} node(s) not measured (no report)` : "",
      s.cluster ? `${serviceInventory(s.cluster).nodePorts.length} NodePort(s) in the cluster` : "",
    ]
      .filter(Boolean)
      .join("; "),
    nodes: names([...flagged, ...unmeasured]),
  };
}
