import { gatherBudget } from "./byte-budget.js";
import { flaggedServices } from "./parity.js";
import { rollup } from "./rollup.js";
import { clusterOnlyScope, savedScope, withScope } from "./report/scope.js";
import { AnswerJudge } from "./answer-judge.js";
import { demoFiles } from "./demo/samples.js";
import { listSavedFiles, readSavedReports } from "./sources/files.js";
import type { ClusterFacts } from "./report/cluster-facts.js";
import type { FleetReport, NodeObservation } from "./report/schema.js";
import { DEFAULT_MAX_REPORT_BYTES, fetchAgents, STALE_AFTER_S, type AgentTarget } from "./sources/agents.js";
import {
  agentTargets,
  defaultAgentCalls,
  directAccess,
  gatherCluster,
  listAgentPods,
  loadKubeConfig,
  readEndpointSlices,
  type AgentAccess,
  type Kube,
} from "./sources/kubernetes.js";
import { gatherBurnDown, gatherFromPrometheus, type BurnDownPoint } from "./sources/prometheus.js";
import { readTargetsFile, targetsFromFlags } from "./sources/static.js";
import { VERSION as COLLECTOR_VERSION } from "../common/version.js";

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
  targetVersion?: import("./checks/target-version.js").TargetVersion | null;
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
 * rows for the rest instead of a gather that never ends.
 */
export const DEFAULT_GATHER_DEADLINE_MS = 120_000;

/**
 * `cluster`: the API's facts the report was made from (null: no API server asked), for report --changes.
 * `usage`: the flags cannot work (an --agents-file that is not a list of agents): exit 2, not "no report".
 */
export type GatherResult =
  | { ok: true; report: FleetReport; cluster?: ClusterFacts | null }
  | { ok: false; error: string; usage?: true };

/** Sources in, one FleetReport out. Fails (no report) only when no honest report can be made. */
export async function gather(
  cfg: GatherConfig,
  onProgress?: (done: number, total: number) => void,
): Promise<GatherResult> {
  const started = new Date();
  const saved = cfg.demo === true || (cfg.fromFiles?.length ?? 0) > 0;
  // Saved reports ask the API only when a kubeconfig is named, as the static source does; a demo never.
  const needApi = cfg.demo !== true && ((cfg.source !== "static" && !saved) || cfg.kubeconfig !== null);
  let kube: Kube | null = null;
  let cluster: ClusterFacts | null = null;
  // Prometheus's answers need nothing from the API: its queries and the burn-down go out now, while
  // the API is read, so the gather waits for the longest of them, not their sum.
  const fromProm =
    !saved && cfg.source === "prometheus" && cfg.prometheusUrl
      ? gatherPrometheus(cfg, cfg.gatherDeadlineMs ?? DEFAULT_GATHER_DEADLINE_MS)
      : null;
  if (needApi) {
    const loaded = loadKubeConfig(cfg);
    if (!loaded.ok) return loaded;
    kube = loaded.value;
    const c = await gatherCluster(kube.kc, cfg);
    if (!c.ok) return c;
    cluster = c.value;
  }
  const fetchOpts = {
    timeoutMs: cfg.timeoutMs,
    maxBytes: DEFAULT_MAX_REPORT_BYTES,
    budget: gatherBudget({ perAnswer: DEFAULT_MAX_REPORT_BYTES }),
    deadlineMs: cfg.gatherDeadlineMs ?? DEFAULT_GATHER_DEADLINE_MS,
    ...(onProgress ? { onProgress } : {}),
  };
  // The agents' calls and the parity confirmation share the gather's one deadline.
  const gatherStarted = performance.now();
  const leftMs = () => fetchOpts.deadlineMs - (performance.now() - gatherStarted);
  let observations: NodeObservation[];
  let history: { history: BurnDownPoint[] } | { historyError: string } | Record<string, never> = {};
  if (saved) {
    const listed = cfg.demo ? await demoFiles() : await listSavedFiles(cfg.fromFiles ?? []);
    if (!listed.ok) return listed;
    const judge = new AnswerJudge();
    try {
      observations = await readSavedReports(listed.files, judge, onProgress);
    } finally {
      await judge.close();
    }
    const rolled = rollup({
      source: "static",
      collectorVersion: COLLECTOR_VERSION,
      generatedAt: started,
      cluster,
      observations,
      missingOutcome: "no-data",
      missingReason: "no saved report for this node among --from-files",
      targetVersion: cfg.targetVersion,
    });
    const from = cfg.demo ? "collector/demo" : (cfg.fromFiles ?? []).join(" ");
    return {
      ok: true,
      cluster,
      report: withScope(rolled, savedScope(rolled, cfg.demo ? "demo" : "saved-files", from)),
    };
  }
  switch (cfg.source) {
    case "agents": {
      const pods = await listAgentPods(kube!.kc, cfg);
      if (!pods.ok) return pods;
      const direct = directAccess(cfg.agentAccess, kube!);
      observations = await fetchAgents(agentTargets(kube!, pods.value, cfg.agentAccess), {
        ...fetchOpts,
        concurrency: cfg.concurrency ?? defaultAgentCalls(direct),
      });
      break;
    }
    case "static": {
      const listed = await staticTargets(cfg);
      if (!listed.ok) return listed;
      const targets = listed.targets;
      observations = await fetchAgents(targets, {
        ...fetchOpts,
        concurrency: cfg.concurrency ?? defaultAgentCalls(true),
      });
      break;
    }
    case "prometheus": {
      if (!fromProm) return { ok: false, error: "--source prometheus needs --prometheus-url", usage: true };
      const { p, h } = await fromProm;
      if (!p.ok) return p;
      observations = p.value;
      // The burn-down: a history that cannot be read is named on the page, and the report stands.
      history = h.ok ? { history: h.value } : { historyError: h.error };
      break;
    }
  }
  // Parity: the flagged Services' current EndpointSlices, so the rollup can tell churn from a loss.
  const slices =
    kube !== null && cluster !== null
      ? await readEndpointSlices(kube.kc, flaggedServices(observations, cluster), {
          timeoutMs: cfg.timeoutMs,
          leftMs,
        })
      : undefined;
  const rolled = rollup({
    source: cfg.source,
    collectorVersion: COLLECTOR_VERSION,
    generatedAt: started,
    cluster,
    observations,
    missingOutcome: cfg.source === "prometheus" ? "no-data" : "no-agent",
    targetVersion: cfg.targetVersion,
    ...(slices ? { slices } : {}),
  });
  // No agent answered but the API did: the report is the cluster-only preflight, and says so.
  return { ok: true, cluster, report: { ...withScope(rolled, clusterOnlyScope(rolled)), ...history } };
}

/** --source static's agents, from --agents and --agents-file; a list that cannot work is a usage error. */
export async function staticTargets(
  cfg: Pick<GatherConfig, "agents" | "agentsFile">,
): Promise<{ ok: true; targets: AgentTarget[] } | { ok: false; error: string; usage: true }> {
  const lists = [
    targetsFromFlags(cfg.agents),
    ...(cfg.agentsFile ? [await readTargetsFile(cfg.agentsFile)] : []),
  ];
  const errors = lists.flatMap((l) => l.errors);
  if (errors.length > 0) return { ok: false, error: errors.join("; "), usage: true };
  const targets = lists.flatMap((l) => l.targets);
  if (targets.length === 0)
    return {
      ok: false,
      error: cfg.agentsFile
        ? "--agents-file lists no agent"
        : "--source static needs --agents URL... or --agents-file",
      usage: true,
    };
  return { ok: true, targets };
}

/** Four weeks every six hours: a review's horizon, within Prometheus's default 15 days it shows what it holds. */
export const BURN_DOWN_RANGE_S = 28 * 86400;
export const BURN_DOWN_STEP_S = 6 * 3600;

/**
 * The Prometheus source's instant queries and the burn-down's range query, at once, under the gather's
 * one deadline (--timeout-ms is per API call): one query answers for the whole fleet and costs with its
 * size, and Prometheus evaluates them on its cores side by side.
 */
async function gatherPrometheus(cfg: GatherConfig, deadlineMs: number) {
  const [p, h] = await Promise.all([
    gatherFromPrometheus(promOpts(cfg, deadlineMs)),
    gatherBurnDown(promOpts(cfg, deadlineMs), BURN_DOWN_RANGE_S, BURN_DOWN_STEP_S),
  ]);
  return { p, h };
}

function promOpts(cfg: GatherConfig, leftMs: number) {
  return {
    url: cfg.prometheusUrl!,
    nodeLabel: cfg.prometheusNodeLabel,
    timeoutMs: Math.max(1, Math.floor(leftMs)),
    maxBytes: 64 * 1024 * 1024,
    staleAfterS: STALE_AFTER_S,
    now: () => Date.now() / 1000,
  };
}
