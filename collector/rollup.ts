import {
  AFTER_CONFIG_IDS,
  MEASURE_IDS,
  Phase,
  SCHEMA_VERSION as NODE_SCHEMA_VERSION,
  SEVERITIES,
  Verdict,
} from "../agent/contract.js";
import { API_NOT_ASKED } from "./fail-on.js";
import { configSource, kubeProxyUnread, sourceRemedy, type ObservedPhase } from "./checks/config-source.js";
import { configuredMode } from "./checks/proxy-config.js";
import { canaryParityNote, confirmNodeParity, fleetParity, nameNodeParity } from "./parity.js";
import { serviceInventory } from "./checks/services.js";
import { failedObservation } from "./observe.js";
import { deprecationStage } from "./checks/timeline.js";
import type { TargetVersion } from "./checks/target-version.js";
import { nftablesCapable, parseKernelRelease } from "./parse/kube-proxy-config.js";
import type { ApiNode, ClusterFacts, SliceReads } from "./report/cluster-facts.js";
import { CLUSTER_AFTER_CONFIG_IDS } from "./rules/catalogue.js";
import { judgeCluster, type ClusterFinding } from "./rules/index.js";
import {
  FLEET_SCHEMA_VERSION,
  NodeOutcome,
  type FleetNode,
  type FleetReport,
  type NodeObservation,
  type PlanStep,
} from "./report/schema.js";

export interface RollupInput {
  source: FleetReport["source"];
  collectorVersion: string;
  generatedAt: Date;
  /** null when no API server was asked (static source): nothing can then be "missing". */
  cluster: ClusterFacts | null;
  observations: readonly NodeObservation[];
  /** What a node the API lists but no source covered is called: no-agent (agents) or no-data (Prometheus). */
  missingOutcome: "no-agent" | "no-data";
  /** Why such a node has no report, when the source is not the one missingOutcome's wording assumes. */
  missingReason?: string;
  /** `--target-version`: judge what breaks when the cluster reaches it. */
  targetVersion?: TargetVersion | null;
  /** Parity: the current EndpointSlices of the Services parity flagged (gather reads them). */
  slices?: SliceReads;
}

/**
 * Labels that name a rollout pool, most specific first: GKE's node pool, EKS managed node groups, AKS agent
 * pools, kOps instance groups (kOps sets kops.k8s.io/instancegroup on every node of an InstanceGroup since
 * kubernetes/kops#3783, pkg/nodelabels), Karpenter, generic; the instance type last, as a fallback.
 */
export const POOL_LABELS = [
  "cloud.google.com/gke-nodepool",
  "eks.amazonaws.com/nodegroup",
  "kubernetes.azure.com/agentpool",
  "agentpool",
  "kops.k8s.io/instancegroup",
  "karpenter.sh/nodepool",
  "node.kubernetes.io/pool",
  "nodepool",
  "node.kubernetes.io/instance-type",
] as const;

export function poolOf(
  labels: Record<string, string>,
  osImage: string | null,
  kernel: string | null,
): string {
  const named = POOL_LABELS.map((k) => labels[k]).find((v) => v !== undefined && v !== "");
  const k = parseKernelRelease(kernel);
  return [
    named ?? "(no pool label)",
    osImage ?? "(unknown OS)",
    k ? `${k.major}.${k.minor}` : "(unknown kernel)",
  ].join(" · ");
}

const PRE_SWITCH = new Set<string>(["ipvs", "iptables"]);

function fleetNode(obs: NodeObservation, api: ApiNode | undefined, listed: boolean | null): FleetNode {
  const kernel = api?.kernelVersion ?? obs.kernelRelease;
  const labels = api?.labels ?? {};
  return {
    ...obs,
    listedByApi: listed,
    kubeletVersion: api?.kubeletVersion ?? null,
    kernelVersion: kernel,
    // The kubelet's osImage is the same PRETTY_NAME: the agent's reading stands in without the API.
    osImage: api?.osImage ?? obs.osPrettyName ?? null,
    internalIP: api?.addresses.find((a) => a.type === "InternalIP")?.address ?? null,
    labels,
    ready: api?.ready ?? null,
    pool: poolOf(labels, api?.osImage ?? null, kernel),
    nftablesCapableKernel: nftablesCapable(kernel) ?? obs.kernelNftablesCapable,
  };
}

/** Every node the API lists, each exactly once, then the agents that answered for nodes it does not list. */
export function joinNodes(input: RollupInput): FleetNode[] {
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
      byName.get(n.name) ??
      failedObservation(
        n.name,
        null,
        input.missingOutcome,
        input.missingReason ??
          (input.missingOutcome === "no-agent"
            ? "no agent pod found on this node (DaemonSet not scheduled here, or not running)"
            : "no proxyscope series for this node in Prometheus"),
      );
    out.push(fleetNode(obs, n, true));
  }
  for (const o of byName.values()) if (!seen.has(o.node)) out.push(fleetNode(o, undefined, false));
  return out;
}

function tally<K extends string>(keys: readonly K[], values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(keys.map((k) => [k, 0]));
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

export function rollup(input: RollupInput): FleetReport {
  const nodes = joinNodes(input).map((n) =>
    n.parity == null
      ? n
      : {
          ...n,
          parity: {
            ...nameNodeParity(n.parity, input.cluster)!,
            checks: confirmNodeParity(n.parity, {
              cluster: input.cluster,
              slices: input.slices,
              node: n.node,
              zone: n.labels["topology.kubernetes.io/zone"] ?? null,
            }),
          },
        },
  );
  const answered = nodes.filter((n) => n.outcome === "ok");
  const cluster = input.cluster;
  const observed = observedPhases(nodes);
  const clusterFindings = judgeCluster({
    facts: cluster,
    observed,
    phases: nodes.map((n) => ({ node: n.node, phase: n.outcome === "ok" ? n.phase : null })),
    targetVersion: input.targetVersion ?? null,
  });
  const severities = [
    ...clusterFindings.map((f) => f.severity),
    ...nodes.flatMap((n) => n.findings.map((f) => f.severity)),
  ];
  return {
    schemaVersion: FLEET_SCHEMA_VERSION,
    nodeSchemaVersion: NODE_SCHEMA_VERSION,
    collectorVersion: input.collectorVersion,
    generatedAt: input.generatedAt.toISOString(),
    source: input.source,
    partial: answered.length < nodes.length,
    summary: {
      nodes: nodes.length,
      answered: answered.length,
      unanswered: nodes.length - answered.length,
      notListedByApi: nodes.filter((n) => n.listedByApi === false).length,
      byPhase: tally(
        [...Phase.options, "no-report"],
        nodes.map((n) => n.phase ?? "no-report"),
      ),
      byVerdict: tally(
        [...Verdict.options, "no-report"],
        nodes.map((n) => n.verdict ?? "no-report"),
      ),
      byOutcome: tally(
        NodeOutcome.options,
        nodes.map((n) => n.outcome),
      ),
      bySeverity: tally(SEVERITIES, severities),
      parity: fleetParity(nodes),
    },
    cluster: {
      version: cluster?.version ?? null,
      deprecationStage: deprecationStage(cluster?.version ?? null),
      kubeProxyConfigMap: cluster?.kubeProxyConfigMap ?? null,
      kubeProxyDaemonSet: cluster?.kubeProxyDaemonSet ?? null,
      kubeadm: cluster ? cluster.kubeadm : null,
      configuredMode: cluster ? configuredMode(cluster) : null,
      configSource: cluster ? configSource(cluster, observed) : null,
      staticKubeProxy: cluster?.staticKubeProxy ?? null,
      services: cluster
        ? serviceInventory(cluster)
        : {
            total: 0,
            nodePorts: [],
            sessionAffinityClientIP: [],
            internalTrafficPolicyLocal: [],
            externalTrafficPolicyLocal: [],
          },
      gaps: cluster?.gaps ?? [{ ...API_NOT_ASKED }],
    },
    clusterFindings,
    plan: plan(cluster, nodes, clusterFindings),
    nodes,
  };
}

const names = (ns: readonly FleetNode[]) => ns.map((n) => n.node);

/** What the answered nodes run, and whether kube-proxy said so itself. */
const observedPhases = (nodes: readonly FleetNode[]): ObservedPhase[] =>
  nodes.flatMap((n) =>
    n.outcome === "ok" && n.phase ? [{ node: n.node, phase: n.phase, inferred: n.phaseInferred }] : [],
  );

/**
 * Fit for a canary: nothing blocks it and nothing is broken. "attention" qualifies — every ipvs node
 * carries the deprecation warning itself — but "ready" nodes go first.
 */
const canaryFit = (n: FleetNode) =>
  n.verdict !== "blocked" &&
  !n.findings.some((f) => f.blocksMigration === true || f.severity === "error" || f.severity === "critical");

/** The guide's five steps, in its order, each with a status and the nodes it concerns. */
export function plan(
  cluster: ClusterFacts | null,
  nodes: readonly FleetNode[],
  cf: readonly ClusterFinding[],
): PlanStep[] {
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

  const steps: PlanStep[] = [];
  // 1. Pin the mode, where kube-proxy really reads it. Not read, or not in the API, is not "empty".
  const step1 = !kubeProxyAnywhere
    ? { status: "n/a" as const, detail: "No kube-proxy in this cluster" }
    : src === null
      ? {
          status: "todo" as const,
          detail: "Unknown without API access: check kube-proxy's mode: (or --proxy-mode) by hand",
        }
      : src.pin === "pinned"
        ? { status: "done" as const, detail: `Pinned to ${src.mode}: ${src.where}` }
        : src.pin === "distribution"
          ? {
              status: "done" as const,
              detail: `Pinned by ${src.distribution}: ${src.where}. To change it: ${sourceRemedy(src)}`,
            }
          : src.pin === "not-pinned"
            ? {
                status: "todo" as const,
                detail: `${src.kind === "configmap" ? `mode: is empty in ${src.where}` : `Not pinned: ${src.where}`}. Pin it today (e.g. nftables): ${sourceRemedy(src)}`,
              }
            : {
                status: "todo" as const,
                detail: `Unknown: ${cluster !== null && kubeProxyUnread(cluster) ? "kube-proxy's config could not be read (see what was not read): " : ""}${src.where}`,
              };
  steps.push({
    step: 1,
    id: "pin-mode",
    title: "Pin kube-proxy's mode, whichever it is",
    ...step1,
    nodes: [],
  });

  // 2. Kernels.
  const tooOld = nodes.filter((n) => n.nftablesCapableKernel === false);
  const unknownKernel = nodes.filter((n) => n.nftablesCapableKernel === null);
  steps.push({
    step: 2,
    id: "kernels",
    title: "Check every node's kernel (nftables mode needs 5.13+)",
    status: !migrationOpen ? "n/a" : tooOld.length > 0 || unknownKernel.length > 0 ? "todo" : "done",
    detail:
      tooOld.length > 0
        ? `${tooOld.length} node(s) below 5.13: rebuild their image, or move them to iptables mode${unknownKernel.length ? `; ${unknownKernel.length} with an unknown kernel` : ""}`
        : unknownKernel.length > 0
          ? `${unknownKernel.length} node(s) with an unknown kernel`
          : migrationOpen
            ? "Every node runs 5.13 or newer"
            : "Nothing left to migrate",
    nodes: names([...tooOld, ...unknownKernel]),
  });

  // 3. The two counters and the NodePort address inventory.
  const flagged = answered.filter((n) => n.findings.some((f) => MEASURE_IDS.has(f.id)));
  const unmeasured = nodes.filter((n) => n.outcome !== "ok" && n.listedByApi !== false);
  steps.push({
    step: 3,
    id: "counters-and-nodeports",
    title: "Read the localhost-NodePort and conntrack counters; inventory NodePort addresses",
    status: !migrationOpen ? "n/a" : flagged.length > 0 || unmeasured.length > 0 ? "todo" : "done",
    detail: [
      flagged.length > 0
        ? `${flagged.length} node(s) rely on localhost NodePorts, the conntrack workaround, secondary-address NodePorts or a host firewall: decide nodePortAddresses / --conntrack-tcp-be-liberal first`
        : "",
      unmeasured.length > 0 ? `${unmeasured.length} node(s) not measured (no report)` : "",
      cluster ? `${serviceInventory(cluster).nodePorts.length} NodePort(s) in the cluster` : "",
    ]
      .filter(Boolean)
      .join("; "),
    nodes: names([...flagged, ...unmeasured]),
  });

  // 4. Canary node, then pools.
  const pools = new Map<string, FleetNode[]>();
  // Appended in place: copying the pool's list for each node was quadratic (6.3 s of a 50,000-node report).
  for (const n of pre) {
    const pool = pools.get(n.pool);
    if (pool) pool.push(n);
    else pools.set(n.pool, [n]);
  }
  const poolList = [...pools.entries()]
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
  const canaries = poolList.flatMap((p) => p.readyNodes.slice(0, 1));
  // Parity: a switched node that lost Services stops the next pool; one not compared is not proof.
  const parity = canaryParityNote(nodes);
  // Nodes whose switch would cut live IPVS connections (the agent's ipvs-connections-cut-at-switch).
  const drain = pre.flatMap((n) => {
    const f = n.findings.find((x) => x.id === "ipvs-connections-cut-at-switch");
    const count = f?.evidence?.established;
    return f === undefined ? [] : [`${n.node}${typeof count === "number" ? ` (${count})` : ""}`];
  });
  const drainText =
    drain.length > 0
      ? `Drain each node before switching it (kubectl cordon, then kubectl drain --ignore-daemonsets): ${drain.length} node(s) have established IPVS connections the switch would cut: ${drain.slice(0, 20).join(", ")}${drain.length > 20 ? ` and ${drain.length - 20} more` : ""}`
      : "";
  const parityText = [
    drainText,
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
  steps.push({
    step: 4,
    id: "canary-then-pools",
    title: "One canary node for a working day, then pool by pool",
    status:
      parity.blocked.length > 0
        ? "blocked"
        : !migrationOpen
          ? pre.length === 0 && answered.some((n) => n.phase === "nftables")
            ? "done"
            : "n/a"
          : canaries.length > 0
            ? "todo"
            : "blocked",
    detail:
      (parity.blocked.length > 0 ? `${parityText}. ` : "") +
      (canaries.length > 0
        ? `Canary candidates (one per pool, best pool first; a working day each before its pool): ${canaries.join(", ")}${parity.blocked.length > 0 ? "" : `; ${parityText}`}`
        : pre.length > 0
          ? "No node is fit for a canary: every candidate is blocked or has an error; fix those first"
          : answered.length === 0
            ? "No node answered: nothing is known about the nodes yet"
            : migrationOpen
              ? "No answered node runs ipvs or iptables; unanswered nodes decide"
              : "Every answered node has moved"),
    nodes: canaries,
    pools: poolList,
  });

  // 5. Remove the ipvs block and strictARP.
  const blockLeft = cf.some((f) => CLUSTER_AFTER_CONFIG_IDS.has(f.id));
  const sysctlsLeft = answered.filter((n) => n.findings.some((f) => AFTER_CONFIG_IDS.has(f.id)));
  const stillIpvs = answered.filter((n) => n.phase === "ipvs");
  steps.push({
    step: 5,
    id: "remove-ipvs-config",
    title: "Remove the ipvs block and strictARP (and in kubeadm's configuration)",
    status: !kubeProxyAnywhere
      ? "n/a"
      : ipvsLeft || noReport.length > 0
        ? "blocked"
        : blockLeft || sysctlsLeft.length > 0
          ? "todo"
          : "done",
    detail: ipvsLeft
      ? `Only after every node has left ipvs (${stillIpvs.length} still on it${mode === "ipvs" ? ", and the config still says ipvs" : ""})`
      : noReport.length > 0
        ? `${noReport.length} node(s) unanswered: cannot tell whether any still runs ipvs`
        : blockLeft
          ? `The ipvs: block is still in ConfigMap ${cluster?.kubeProxyConfigMap?.name ?? "kube-proxy"} (key ${cluster?.kubeProxyConfigMap?.key ?? "config.conf"}): delete it`
          : sysctlsLeft.length > 0
            ? "strictARP sysctls still set on some nodes (harmless; reset to stock when convenient)"
            : "No ipvs configuration left",
    nodes: names(ipvsLeft ? stillIpvs : sysctlsLeft),
  });
  return steps;
}
