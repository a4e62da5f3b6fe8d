import { configSource, type ObservedPhase } from "../checks/config-source.js";
import { configuredMode } from "../checks/proxy-config.js";
import type { ClusterFacts, ConfigSource } from "../report/cluster-facts.js";
import type { ClusterFinding } from "../rules/index.js";
import type { FleetNode } from "../report/schema.js";

// What every step of the fleet plan reads of the fleet, decided once: which nodes answered, which
// still run a pre-switch mode, where kube-proxy's mode comes from, and whether the migration is open.

/** The modes a node leaves at the switch. */
const PRE_SWITCH = new Set<string>(["ipvs", "iptables"]);

export const names = (ns: readonly FleetNode[]) => ns.map((n) => n.node);

/** What the answered nodes run, and whether kube-proxy said so itself. */
export const observedPhases = (nodes: readonly FleetNode[]): ObservedPhase[] =>
  nodes.flatMap((n) =>
    n.outcome === "ok" && n.phase ? [{ node: n.node, phase: n.phase, inferred: n.phaseInferred }] : [],
  );

export interface FleetState {
  cluster: ClusterFacts | null;
  nodes: readonly FleetNode[];
  clusterFindings: readonly ClusterFinding[];
  answered: FleetNode[];
  noReport: FleetNode[];
  /** Answered nodes still on ipvs or iptables. */
  pre: FleetNode[];
  /** Where kube-proxy's mode comes from; null without API access. */
  src: ConfigSource | null;
  /** kube-proxy runs somewhere, or nothing is known that says it does not. */
  kubeProxyAnywhere: boolean;
  /** The mode the config pins; null without API access or when it follows the default. */
  mode: string | null;
  ipvsLeft: boolean;
  /** Some node may still have to switch: a step cannot be called done for the fleet. */
  migrationOpen: boolean;
}

export function fleetState(
  cluster: ClusterFacts | null,
  nodes: readonly FleetNode[],
  clusterFindings: readonly ClusterFinding[],
): FleetState {
  const answered = nodes.filter((n) => n.outcome === "ok");
  const noReport = nodes.filter((n) => n.outcome !== "ok");
  const pre = answered.filter((n) => n.phase !== null && PRE_SWITCH.has(n.phase));
  // No API access and no node answered: nothing is known, so nothing may be called absent or done.
  const blind = cluster === null && answered.length === 0;
  const src = cluster ? configSource(cluster, observedPhases(nodes)) : null;
  const kubeProxyAnywhere =
    blind || (src !== null && src.kind !== "none") || answered.some((n) => n.phase !== "none");
  const mode = cluster ? configuredMode(cluster) : null;
  const ipvsLeft = mode === "ipvs" || answered.some((n) => n.phase === "ipvs");
  // With nodes unanswered we cannot claim a step is done for the fleet.
  const migrationOpen = pre.length > 0 || mode === "ipvs" || (noReport.length > 0 && kubeProxyAnywhere);
  return {
    cluster,
    nodes,
    clusterFindings,
    answered,
    noReport,
    pre,
    src,
    kubeProxyAnywhere,
    mode,
    ipvsLeft,
    migrationOpen,
  };
}
