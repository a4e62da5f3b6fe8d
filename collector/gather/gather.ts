import { VERSION as COLLECTOR_VERSION } from "../../common/version.js";
import { flaggedServices } from "../parity/flagged.js";
import type { ClusterFacts } from "../report/cluster-facts.js";
import { clusterOnlyScope, withScope } from "../report/scope.js";
import { rollup } from "../plan/rollup.js";
import { DEFAULT_MAX_REPORT_BYTES, fetchAgents } from "../sources/agents.js";
import {
  agentTargets,
  defaultAgentCalls,
  directAccess,
  gatherCluster,
  listAgentPods,
  loadKubeConfig,
  readEndpointSlices,
  type Kube,
} from "../sources/kubernetes/index.js";
import { gatherBudget } from "./byte-budget.js";
import { takePrometheus } from "./from-prometheus.js";
import { gatherSaved } from "./saved.js";
import { staticTargets } from "./static-targets.js";
import { DEFAULT_GATHER_DEADLINE_MS, type GatherConfig, type GatherResult, type Observed } from "./types.js";

// The gather stage: which sources are asked, in what order, under one deadline, and the rollup of
// what they said. Saved reports (saved.ts), Prometheus (from-prometheus.ts) and the static list
// (static-targets.ts) have files of their own.
export { staticTargets } from "./static-targets.js";
export type { GatherConfig, GatherResult } from "./types.js";

/** Sources in, one FleetReport out. Fails (no report) only when no honest report can be made. */
export async function gather(
  cfg: GatherConfig,
  onProgress?: (done: number, total: number) => void,
): Promise<GatherResult> {
  const started = new Date();
  const saved = cfg.demo === true || (cfg.fromFiles?.length ?? 0) > 0;
  // Prometheus's answers need nothing from the API: they go out now (or went out before this code was
  // loaded: the CLI starts them), while the API is read.
  const fromProm = takePrometheus(cfg);
  const api = await readApi(cfg, saved);
  if (!api.ok) return api;
  const { kube, cluster } = api;
  if (saved) return gatherSaved(cfg, cluster, started, onProgress);
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
  const observed = await observe(cfg, kube, fetchOpts, fromProm);
  if (!observed.ok) return observed;
  const { observations, history } = observed;
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

/** The API's facts, when the source needs them; without an API server both are null. */
async function readApi(
  cfg: GatherConfig,
  saved: boolean,
): Promise<{ ok: true; kube: Kube | null; cluster: ClusterFacts | null } | { ok: false; error: string }> {
  // Saved reports ask the API only when a kubeconfig is named, as the static source does; a demo never.
  const needApi = cfg.demo !== true && ((cfg.source !== "static" && !saved) || cfg.kubeconfig !== null);
  if (!needApi) return { ok: true, kube: null, cluster: null };
  const loaded = loadKubeConfig(cfg);
  if (!loaded.ok) return loaded;
  const c = await gatherCluster(loaded.value.kc, cfg);
  if (!c.ok) return c;
  return { ok: true, kube: loaded.value, cluster: c.value };
}

type FetchBase = Omit<Parameters<typeof fetchAgents>[1], "concurrency"> & { deadlineMs: number };

/** The nodes as the configured source tells them. */
async function observe(
  cfg: GatherConfig,
  kube: Kube | null,
  fetchOpts: FetchBase,
  prom: Promise<Observed> | null,
): Promise<Observed> {
  switch (cfg.source) {
    case "agents": {
      const pods = await listAgentPods(kube!.kc, cfg);
      if (!pods.ok) return pods;
      const direct = directAccess(cfg.agentAccess, kube!);
      const observations = await fetchAgents(agentTargets(kube!, pods.value, cfg.agentAccess), {
        ...fetchOpts,
        concurrency: cfg.concurrency ?? defaultAgentCalls(direct),
      });
      return { ok: true, observations, history: {} };
    }
    case "static": {
      const listed = await staticTargets(cfg);
      if (!listed.ok) return listed;
      const observations = await fetchAgents(listed.targets, {
        ...fetchOpts,
        concurrency: cfg.concurrency ?? defaultAgentCalls(true),
      });
      return { ok: true, observations, history: {} };
    }
    case "prometheus":
      // Started before the API was read (gather()): its queries are sent once, never again here.
      return prom ?? { ok: false, error: "the Prometheus queries were not started for this gather" };
  }
}
