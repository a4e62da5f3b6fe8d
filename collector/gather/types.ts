import type { TargetVersion } from "../checks/target-version.js";
import type { ClusterFacts } from "../report/cluster-facts.js";
import type { FleetReport, NodeObservation } from "../report/schema.js";
import type { AgentAccess } from "../sources/kubernetes/index.js";
import type { BurnDownPoint } from "../sources/prometheus.js";

// What a gather takes and gives, apart from gather.ts so the files of its steps can name them.

export interface GatherConfig {
  source: "agents" | "prometheus" | "static";
  kubeconfig: string | null;
  context: string | null;
  kubeProxyNamespace: string;
  agentNamespace: string;
  agentSelector: string;
  agentPort: number;
  agentAccess: AgentAccess;
  agents: string[];
  agentsFile: string | null;
  /** `report --from-files`: saved node reports instead of a gather (sources/files.ts). */
  fromFiles?: string[];
  /** `report --demo`: the sample fleet shipped with proxyscope, no cluster asked. */
  demo?: boolean;
  /** `--target-version`: also judge what breaks at that release; absent: not asked. */
  targetVersion?: TargetVersion | null;
  prometheusUrl: string | null;
  prometheusNodeLabel: string;
  /** Agent calls in flight; null: defaultAgentCalls for the way the agents are reached. */
  concurrency: number | null;
  timeoutMs: number;
  /** The whole gather's deadline (agents' calls, or Prometheus's queries); DEFAULT_GATHER_DEADLINE_MS when absent. */
  gatherDeadlineMs?: number;
}

/**
 * One deadline for all the agent calls of a gather: 5,000 agents at 32 at once take ~20 s when 0.2 %
 * hang (bench/results); a fleet whose slow agents would push it past this many seconds gets timeout
 * rows for the rest instead of a gather that never ends. Prometheus's queries share it.
 */
export const DEFAULT_GATHER_DEADLINE_MS = 120_000;

/**
 * `cluster`: the API's facts the report was made from (null: no API server asked), for report --changes.
 * `usage`: the flags cannot work (an --agents-file that is not a list of agents): exit 2, not "no report".
 */
export type GatherResult =
  | { ok: true; report: FleetReport; cluster?: ClusterFacts | null }
  | { ok: false; error: string; usage?: true };

/** The burn-down Prometheus gave, or why not; empty for the other sources. */
type History = { history: BurnDownPoint[] } | { historyError: string } | Record<string, never>;

/** One source's nodes (and Prometheus's history), or why there is no report. */
export type Observed =
  | { ok: true; observations: NodeObservation[]; history: History }
  | { ok: false; error: string; usage?: true };
