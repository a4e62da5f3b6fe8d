import { canaryParityNote } from "../parity/fleet.js";
import type { FleetNode, PlanStep } from "../report/schema.js";
import { names, type FleetState } from "./fleet-state.js";

type Pool = NonNullable<PlanStep["pools"]>[number];

/**
 * Fit for a canary: nothing blocks it and nothing is broken. "attention" qualifies — every ipvs node
 * carries the deprecation warning itself — but "ready" nodes go first.
 */
const canaryFit = (n: FleetNode) =>
  n.verdict !== "blocked" &&
  !n.findings.some((f) => f.blocksMigration === true || f.severity === "error" || f.severity === "critical");

/** The pre-switch nodes by pool, the pool with the largest share fit for a canary first. */
function poolOrder(pre: readonly FleetNode[]): Pool[] {
  const pools = new Map<string, FleetNode[]>();
  // Appended in place: copying the pool's list for each node was quadratic (6.3 s of a 50,000-node report).
  for (const n of pre) {
    const pool = pools.get(n.pool);
    if (pool) pool.push(n);
    else pools.set(n.pool, [n]);
  }
  return [...pools.entries()]
    .map(([pool, ns]) => ({
      pool,
      nodes: names(ns),
      readyNodes: names(
        ns.filter(canaryFit).sort((a, b) => Number(b.verdict === "ready") - Number(a.verdict === "ready")),
      ),
    }))
    .sort(
      (a, b) =>
        b.readyNodes.length / b.nodes.length - a.readyNodes.length / a.nodes.length ||
        a.nodes.length - b.nodes.length ||
        a.pool.localeCompare(b.pool),
    );
}

/** Nodes whose switch would cut live IPVS connections (the agent's ipvs-connections-cut-at-switch). */
function drainText(pre: readonly FleetNode[]): string {
  const drain = pre.flatMap((n) => {
    const f = n.findings.find((x) => x.id === "ipvs-connections-cut-at-switch");
    const count = f?.evidence?.established;
    return f === undefined ? [] : [`${n.node}${typeof count === "number" ? ` (${count})` : ""}`];
  });
  return drain.length > 0
    ? `Drain each node before switching it (kubectl cordon, then kubectl drain --ignore-daemonsets): ${drain.length} node(s) have established IPVS connections the switch would cut: ${drain.slice(0, 20).join(", ")}${drain.length > 20 ? ` and ${drain.length - 20} more` : ""}`
    : "";
}

/** What the step says before each next pool: drain, lost Services, parity not shown. */
function beforeEachPool(pre: readonly FleetNode[], parity: ReturnType<typeof canaryParityNote>): string {
  return [
    drainText(pre),
    parity.blocked.length > 0
      ? `Services lost in the switch on ${parity.blocked.join(", ")}: fix them before the next pool`
      : "",
    parity.unproven.length > 0
      ? `parity not shown on switched node(s) ${parity.unproven.join(", ")} (run the agent with --parity-snapshot before the switch)`
      : "",
    "before each next pool, check parity on the switched nodes (proxyscope-agent verify, or /parity)",
  ]
    .filter(Boolean)
    .join("; ");
}

/** Why there is no canary candidate, or that the fleet has moved. */
function noCanary(s: FleetState): string {
  if (s.pre.length > 0)
    return "No node is fit for a canary: every candidate is blocked or has an error; fix those first";
  if (s.answered.length === 0) return "No node answered: nothing is known about the nodes yet";
  return s.migrationOpen
    ? "No answered node runs ipvs or iptables; unanswered nodes decide"
    : "Every answered node has moved";
}

/** Step 4: one canary node for a working day, then pool by pool; a switched node that lost Services stops it. */
export function canaryThenPoolsStep(s: FleetState): PlanStep {
  const pools = poolOrder(s.pre);
  const canaries = pools.flatMap((p) => p.readyNodes.slice(0, 1));
  // Parity: a switched node that lost Services stops the next pool; one not compared is not proof.
  const parity = canaryParityNote(s.nodes);
  const blocked = parity.blocked.length > 0;
  const text = beforeEachPool(s.pre, parity);
  const moved = s.pre.length === 0 && s.answered.some((n) => n.phase === "nftables");
  return {
    step: 4,
    id: "canary-then-pools",
    title: "One canary node for a working day, then pool by pool",
    status: blocked
      ? "blocked"
      : !s.migrationOpen
        ? moved
          ? "done"
          : "n/a"
        : canaries.length > 0
          ? "todo"
          : "blocked",
    detail:
      (blocked ? `${text}. ` : "") +
      (canaries.length > 0
        ? `Canary candidates (one per pool, best pool first; a working day each before its pool): ${canaries.join(", ")}${blocked ? "" : `; ${text}`}`
        : noCanary(s)),
    nodes: canaries,
    pools,
  };
}
