import { failedObservation } from "../gather/observe.js";
import { releaseCanRunNftables } from "../../agent/contract.js";
import type { ApiNode, ClusterFacts } from "../report/cluster-facts.js";
import type { FleetNode, KernelNftables, NodeObservation } from "../report/schema.js";
import { poolOf } from "./node-pool.js";

/** What the join needs of the rollup's input. */
export interface JoinInput {
  /** null when no API server was asked (static source): nothing can then be "missing". */
  cluster: ClusterFacts | null;
  observations: readonly NodeObservation[];
  /** What a node the API lists but no source covered is called: no-agent (agents) or no-data (Prometheus). */
  missingOutcome: "no-agent" | "no-data";
  /** Why such a node has no report, when the source is not the one missingOutcome's wording assumes. */
  missingReason?: string;
}

/**
 * The kernel's capability: read from the kernel string (the API's, else the agent's), else the agent's
 * own judgement; each says where it came from.
 */
function kernelNftables(
  kernel: string | null,
  api: ApiNode | undefined,
  obs: NodeObservation,
): KernelNftables | null {
  const capable = releaseCanRunNftables(kernel);
  if (capable === null) return obs.kernelNftables;
  return { capable, from: api?.kernelVersion != null ? "api" : "agent" };
}

/** One node: what a source observed, plus the API's fields. */
function fleetNode(obs: NodeObservation, api: ApiNode | undefined, listed: boolean | null): FleetNode {
  const kernel = api?.kernelVersion ?? obs.kernel;
  const labels = api?.labels ?? {};
  return {
    ...obs,
    listedByApi: listed,
    kubeletVersion: api?.kubeletVersion ?? null,
    kernel,
    // The kubelet's osImage is the same PRETTY_NAME: the agent's reading stands in without the API.
    osImage: api?.osImage ?? obs.osPrettyName ?? null,
    internalIP: api?.addresses.find((a) => a.type === "InternalIP")?.address ?? null,
    labels,
    ready: api?.ready ?? null,
    pool: poolOf(labels, api?.osImage ?? null, kernel),
    kernelNftables: kernelNftables(kernel, api, obs),
  };
}

/** Why a node the API lists has no observation. */
const missingReason = (input: JoinInput) =>
  input.missingReason ??
  (input.missingOutcome === "no-agent"
    ? "no agent pod found on this node (DaemonSet not scheduled here, or not running)"
    : "no proxyscope series for this node in Prometheus");

/** Every node the API lists, each exactly once, then the agents that answered for nodes it does not list. */
export function joinNodes(input: JoinInput): FleetNode[] {
  const byName = new Map<string, NodeObservation>();
  for (const o of input.observations) {
    const prev = byName.get(o.node);
    // Two answers for one node (two agent URLs): keep the usable one.
    if (!prev || (prev.outcome !== "ok" && o.outcome === "ok")) byName.set(o.node, o);
  }
  if (input.cluster === null) return [...byName.values()].map((o) => fleetNode(o, undefined, null));
  const out: FleetNode[] = [];
  const seen = new Set<string>();
  for (const n of input.cluster.nodes) {
    seen.add(n.name);
    const obs =
      byName.get(n.name) ?? failedObservation(n.name, null, input.missingOutcome, missingReason(input));
    out.push(fleetNode(obs, n, true));
  }
  for (const o of byName.values()) if (!seen.has(o.node)) out.push(fleetNode(o, undefined, false));
  return out;
}
