import type { ClusterFacts } from "../report/cluster-facts.js";
import type { FleetNode, PlanStep } from "../report/schema.js";
import type { ClusterFinding } from "../rules/index.js";
import { canaryThenPoolsStep } from "./canary-then-pools.js";
import { countersAndNodePortsStep } from "./counters-and-nodeports.js";
import { fleetState } from "./fleet-state.js";
import { kernelsStep } from "./kernels.js";
import { pinModeStep } from "./pin-mode.js";
import { removeIpvsConfigStep } from "./remove-ipvs-config.js";

/** The guide's five steps, in its order, each with a status and the nodes it concerns. */
export function plan(
  cluster: ClusterFacts | null,
  nodes: readonly FleetNode[],
  cf: readonly ClusterFinding[],
): PlanStep[] {
  const s = fleetState(cluster, nodes, cf);
  return [pinModeStep, kernelsStep, countersAndNodePortsStep, canaryThenPoolsStep, removeIpvsConfigStep].map(
    (step) => step(s),
  );
}
