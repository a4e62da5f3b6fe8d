import type { PlanStep } from "../report/schema.js";
import { names, type FleetState } from "./fleet-state.js";

/** Step 2: every node's kernel able to run nftables mode (5.13+); an unknown kernel is not a good one. */
export function kernelsStep(s: FleetState): PlanStep {
  const tooOld = s.nodes.filter((n) => n.kernelNftables?.capable === false);
  const unknownKernel = s.nodes.filter((n) => n.kernelNftables === null);
  return {
    step: 2,
    id: "kernels",
    title: "Check every node's kernel (nftables mode needs 5.13+)",
    status: !s.migrationOpen ? "n/a" : tooOld.length > 0 || unknownKernel.length > 0 ? "todo" : "done",
    detail:
      tooOld.length > 0
        ? `${tooOld.length} node(s) below 5.13: rebuild their image, or move them to iptables mode${unknownKernel.length ? `; ${unknownKernel.length} with an unknown kernel` : ""}`
        : unknownKernel.length > 0
          ? `${unknownKernel.length} node(s) with an unknown kernel`
          : s.migrationOpen
            ? "Every node runs 5.13 or newer"
            : "Nothing left to migrate",
    nodes: names([...tooOld, ...unknownKernel]),
  };
}
