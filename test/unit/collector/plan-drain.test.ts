import t from "tap";
import { rollup } from "../../../collector/plan/rollup.js";
import { apiNode, input, ok } from "../../helpers/fleet.js";

// The fleet plan's switch step says to drain first wherever a node has live IPVS connections the
// switch would cut, naming how many per node (the agent's ipvs-connections-cut-at-switch evidence).
const live = (n: number) => ({
  id: "ipvs-connections-cut-at-switch",
  severity: "warning" as const,
  blocksMigration: false,
  evidence: { established: n },
});

t.test("plan: drain before the switch on nodes with live IPVS connections", async (t) => {
  const nodes = ["a1", "a2", "a3"].map((n) => apiNode(n, undefined, { agentpool: "a" }));
  const r = rollup(
    input(
      [
        ok("a1", "ipvs", "attention", [live(12)]),
        ok("a2", "ipvs", "ready"),
        ok("a3", "ipvs", "attention", [live(3)]),
      ],
      nodes,
    ),
  );
  const step = r.plan.find((p) => p.id === "canary-then-pools")!;
  t.match(
    step.detail,
    /Drain each node before switching it \(kubectl cordon, then kubectl drain --ignore-daemonsets\)/,
  );
  t.match(
    step.detail,
    /2 node\(s\) have established IPVS connections the switch would cut: a1 \(12\), a3 \(3\)/,
  );
  const quiet = rollup(input([ok("a2", "ipvs", "ready")], [nodes[1]!]));
  t.notMatch(quiet.plan.find((p) => p.id === "canary-then-pools")!.detail, /established IPVS connections/);
  t.notMatch(
    r.plan.find((p) => p.id === "counters-and-nodeports")!.detail,
    /localhost NodePorts/,
    "live connections are no counter to read: step 3 does not claim them",
  );
});
