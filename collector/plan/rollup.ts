import { SCHEMA_VERSION as NODE_SCHEMA_VERSION } from "../../agent/contract.js";
import { configSource } from "../checks/config-source.js";
import { configuredMode } from "../checks/proxy-config.js";
import { serviceInventory } from "../checks/services.js";
import type { TargetVersion } from "../checks/target-version.js";
import { deprecationStage } from "../checks/timeline.js";
import { withParityChecks } from "../parity/node.js";
import type { ClusterFacts, SliceReads } from "../report/cluster-facts.js";
import { API_NOT_ASKED } from "../report/fail-on.js";
import { FLEET_SCHEMA_VERSION, type FleetReport } from "../report/schema.js";
import { judgeCluster } from "../rules/index.js";
import { observedPhases } from "./fleet-state.js";
import { joinNodes, type JoinInput } from "./join.js";
import { plan } from "./plan.js";
import { fleetSummary } from "./summary.js";

export interface RollupInput extends JoinInput {
  source: FleetReport["source"];
  collectorVersion: string;
  generatedAt: Date;
  /** `--target-version`: judge what breaks when the cluster reaches it. */
  targetVersion?: TargetVersion | null;
  /** Parity: the current EndpointSlices of the Services parity flagged (gather reads them). */
  slices?: SliceReads;
}

const NO_SERVICES: FleetReport["cluster"]["services"] = {
  total: 0,
  nodePorts: [],
  sessionAffinityClientIP: [],
  internalTrafficPolicyLocal: [],
  externalTrafficPolicyLocal: [],
};

/** The report's cluster section: what the API said, and where kube-proxy's mode comes from. */
function clusterSection(
  cluster: ClusterFacts | null,
  observed: ReturnType<typeof observedPhases>,
): FleetReport["cluster"] {
  return {
    version: cluster?.version ?? null,
    deprecationStage: deprecationStage(cluster?.version ?? null),
    kubeProxyConfigMap: cluster?.kubeProxyConfigMap ?? null,
    kubeProxyDaemonSet: cluster?.kubeProxyDaemonSet ?? null,
    kubeadm: cluster ? cluster.kubeadm : null,
    configuredMode: cluster ? configuredMode(cluster) : null,
    configSource: cluster ? configSource(cluster, observed) : null,
    staticKubeProxy: cluster?.staticKubeProxy ?? null,
    services: cluster ? serviceInventory(cluster) : NO_SERVICES,
    gaps: cluster?.gaps ?? [{ ...API_NOT_ASKED }],
  };
}

/** The fleet report: every node joined with the API's view of it, the cluster's checks, and the plan. */
export function rollup(input: RollupInput): FleetReport {
  const cluster = input.cluster;
  const nodes = joinNodes(input).map((n) => withParityChecks(n, cluster, input.slices));
  const observed = observedPhases(nodes);
  const clusterFindings = judgeCluster({
    facts: cluster,
    observed,
    phases: nodes.map((n) => ({ node: n.node, phase: n.outcome === "ok" ? n.phase : null })),
    targetVersion: input.targetVersion ?? null,
  });
  return {
    schemaVersion: FLEET_SCHEMA_VERSION,
    nodeSchemaVersion: NODE_SCHEMA_VERSION,
    collectorVersion: input.collectorVersion,
    generatedAt: input.generatedAt.toISOString(),
    source: input.source,
    partial: nodes.some((n) => n.outcome !== "ok"),
    summary: fleetSummary(nodes, clusterFindings),
    cluster: clusterSection(cluster, observed),
    clusterFindings,
    plan: plan(cluster, nodes, clusterFindings),
    nodes,
  };
}
