import { z } from "zod";
import { Finding, Phase, SCHEMA_VERSION as NODE_SCHEMA_VERSION, Verdict } from "../../agent/contract.js";
import { NodeParity } from "../parity/schema.js";
import { ClusterFacts, ConfigSource } from "./cluster-facts.js";

/**
 * Bumped on any change a consumer of the fleet report could trip over (docs/compatibility.md). "2": a
 * node's kernel is one string (`kernel`) and its nftables capability one field that says where it came
 * from (`kernelNftables`), where "1" had kernelRelease, kernelVersion, kernelNftablesCapable and
 * nftablesCapableKernel.
 */
export const FLEET_SCHEMA_VERSION = "2" as const;

/** How we got (or failed to get) a node's facts. Only "ok" carries a phase and verdict. */
export const NodeOutcome = z.enum([
  "ok",
  "unreachable",
  "timeout",
  "http-status",
  "garbage",
  "schema-mismatch",
  /**
   * The agent answered for another node than its target names, or (URL-only target) claimed a node
   * another target names or another agent also claims: its answer fills no row but its target's.
   */
  "wrong-node",
  /** The API lists the node but no agent pod runs there (or, for Prometheus, no series). */
  "no-agent",
  "no-data",
  /** A well-formed report whose scannedAt is older than STALE_AFTER_S: not this node's present state. */
  "stale",
]);
export type NodeOutcome = z.infer<typeof NodeOutcome>;

/**
 * A finding `--accept-file` accepted: still shown, marked, and not counted for --fail-on's severities.
 * `entries`: the file's entries (0-based) that accepted it.
 */
export const Acceptance = z.object({
  reason: z.string(),
  expires: z.string().optional(),
  entries: z.array(z.number().int()),
});
export type Acceptance = z.infer<typeof Acceptance>;

/** What `--accept-file` did: how many findings it accepted, and the entries that did not apply. */
export const AcceptReport = z.object({
  file: z.string(),
  entries: z.number().int(),
  accepted: z.number().int(),
  expired: z.array(z.string()),
  unmatched: z.array(z.string()),
});
export type AcceptReport = z.infer<typeof AcceptReport>;

/** An agent finding; from Prometheus only id and severity are known, so the rest is optional. */
export const NodeFinding = Finding.partial()
  .required({ id: true, severity: true })
  .extend({ accepted: Acceptance.optional() });
export type NodeFinding = z.infer<typeof NodeFinding>;

/**
 * Whether a kernel can run nftables mode (5.13+), and where that came from: the API's
 * status.nodeInfo.kernelVersion, or the agent (its kernel release, or its own judgement).
 */
export const KernelNftables = z.object({ capable: z.boolean(), from: z.enum(["api", "agent"]) });
export type KernelNftables = z.infer<typeof KernelNftables>;

/** What one source learnt about one node, before the API's view of the node is joined in. */
export const NodeObservation = z.object({
  node: z.string(),
  outcome: NodeOutcome,
  /** Why the outcome is not ok, in words a person can act on (URL, status, schema path). */
  reason: z.string().nullable(),
  /** Where it came from: an agent URL, or the Prometheus instance label. */
  endpoint: z.string().nullable(),
  phase: Phase.nullable(),
  /** The agent guessed the phase from kernel state (kube-proxy did not answer /proxyMode); null: not said. */
  phaseInferred: z.boolean().nullable().default(null),
  verdict: Verdict.nullable(),
  findings: z.array(NodeFinding),
  agentVersion: z.string().nullable(),
  scannedAt: z.string().nullable(),
  /** `uname -r` as the agent read it; in a FleetNode, the API's when the API lists the node. */
  kernel: z.string().nullable(),
  /** The host's os-release PRETTY_NAME as the agent read it; absent or null: not read. */
  osPrettyName: z.string().nullable().optional(),
  /**
   * Whether the kernel can run nftables mode: the agent's own judgement in an observation (Prometheus
   * carries this, not the release); null when not known, never false.
   */
  kernelNftables: KernelNftables.nullable(),
  /** Probes that failed on the node: their facts are missing, not zero. */
  failedProbes: z.array(z.string()),
  /** The few numbers the plan needs, when known (Prometheus gives exactly these). */
  ipvsVirtualServers: z.number().nullable(),
  kubeIpvs0Addresses: z.number().nullable(),
  blackHoledAddresses: z.number().nullable(),
  parity: NodeParity.nullable().optional(),
  /**
   * What a newer agent sent that this collector does not know ("finding <id>", "facts.<key>"): kept,
   * read as far as known, and named; absent when there was none (docs/compatibility.md).
   */
  unknownToCollector: z.array(z.string()).optional(),
});
export type NodeObservation = z.infer<typeof NodeObservation>;

/**
 * One node after the join: the observation, with its kernel and capability the API's when the API lists
 * the node, plus the API's fields.
 */
export const FleetNode = NodeObservation.extend({
  /**
   * False for an agent that answered for a node the API does not list (a deleted node, a wrong URL);
   * null when no API server was asked (static source without a kubeconfig).
   */
  listedByApi: z.boolean().nullable(),
  kubeletVersion: z.string().nullable(),
  osImage: z.string().nullable(),
  internalIP: z.string().nullable(),
  labels: z.record(z.string(), z.string()),
  ready: z.boolean().nullable(),
  /** Grouping key for rollout pools: nodepool label, instance type, OS image, kernel line. */
  pool: z.string(),
});
export type FleetNode = z.infer<typeof FleetNode>;

export const PlanStatus = z.enum(["done", "todo", "blocked", "n/a"]);
export type PlanStatus = z.infer<typeof PlanStatus>;

export const PlanStep = z.object({
  step: z.number().int().min(1).max(5),
  id: z.enum(["pin-mode", "kernels", "counters-and-nodeports", "canary-then-pools", "remove-ipvs-config"]),
  title: z.string(),
  status: PlanStatus,
  detail: z.string(),
  /** The nodes the step concerns (too-old kernels, canary candidates, nodes not yet measured...). */
  nodes: z.array(z.string()),
  /** Step 4 only: pools in the order to roll them; readyNodes: fit for a canary (not blocked, no error), ready first. */
  pools: z
    .array(z.object({ pool: z.string(), nodes: z.array(z.string()), readyNodes: z.array(z.string()) }))
    .optional(),
});
export type PlanStep = z.infer<typeof PlanStep>;

export const DeprecationStage = z.enum([
  "before-deprecation",
  "warning",
  "gated",
  "off-by-default",
  "removed",
  "gate-removed",
  "unknown",
]);
export type DeprecationStage = z.infer<typeof DeprecationStage>;

const counts = z.record(z.string(), z.number().int());

/**
 * What kind of report this is when it is not a fleet of agents' answers: every format prints the
 * heading first, so a cluster-only preflight or a demo is never read as the fleet's state. Absent: a
 * fleet report (and every report of an older collector).
 */
export const ReportScope = z.object({
  kind: z.enum(["cluster-only", "saved-files", "demo"]),
  heading: z.string(),
  /** The nodes whose own state was not read, each "node: why" (cluster-only: all of them). */
  notRead: z.array(z.string()),
});
export type ReportScope = z.infer<typeof ReportScope>;

export const FleetReport = z.object({
  schemaVersion: z.literal(FLEET_SCHEMA_VERSION),
  /** The NodeReport schema version this collector reads. */
  nodeSchemaVersion: z.literal(NODE_SCHEMA_VERSION),
  collectorVersion: z.string(),
  generatedAt: z.string().datetime(),
  source: z.enum(["agents", "prometheus", "static"]),
  scope: ReportScope.optional(),
  /** True when at least one node has no usable report: the counts below are then a lower bound. */
  partial: z.boolean(),
  summary: z.object({
    nodes: z.number().int(),
    answered: z.number().int(),
    unanswered: z.number().int(),
    notListedByApi: z.number().int(),
    /** Keys: phases, plus "no-report". */
    byPhase: counts,
    /** Keys: verdicts, plus "no-report". */
    byVerdict: counts,
    byOutcome: counts,
    /** Findings by severity, nodes and cluster together. */
    bySeverity: counts,
    /** Parity, fleet-wide: nodes by parity state, and the Service entries over every compared node. */
    parity: z
      .object({
        byState: counts,
        nodesWithLost: z.array(z.string()),
        missingAfter: z.number().int(),
        endpointsDiffer: z.number().int(),
        same: z.number().int(),
        /** Flagged entries by what the API made of them (ParityVerdict); absent from older collectors. */
        byVerdict: counts.optional(),
        /** Nodes with a loss the API confirms (confirmed-loss or real-loss). */
        nodesWithConfirmedLoss: z.array(z.string()).optional(),
      })
      .optional(),
  }),
  cluster: z.object({
    version: ClusterFacts.shape.version,
    deprecationStage: DeprecationStage,
    kubeProxyConfigMap: ClusterFacts.shape.kubeProxyConfigMap,
    kubeProxyDaemonSet: ClusterFacts.shape.kubeProxyDaemonSet,
    /** null when the API was not read: unread is not "no kubeadm". */
    kubeadm: z.boolean().nullable(),
    /** What the config says kube-proxy should run: pinned mode, or null when it follows the default. */
    configuredMode: z.string().nullable(),
    /** Where the mode comes from (null without API access); optional for reports of older collectors. */
    configSource: ConfigSource.nullable().optional(),
    staticKubeProxy: ClusterFacts.shape.staticKubeProxy.optional(),
    services: z.object({
      total: z.number().int(),
      nodePorts: z.array(
        z.object({
          service: z.string(),
          type: z.string(),
          port: z.number().int(),
          nodePort: z.number().int(),
          protocol: z.string(),
        }),
      ),
      sessionAffinityClientIP: z.array(z.string()),
      internalTrafficPolicyLocal: z.array(z.string()),
      externalTrafficPolicyLocal: z.array(z.string()),
    }),
    gaps: ClusterFacts.shape.gaps,
  }),
  clusterFindings: z.array(Finding.extend({ accepted: Acceptance.optional() })),
  /** `--accept-file`'s effect; absent without one. */
  acceptances: AcceptReport.optional(),
  plan: z.array(PlanStep),
  nodes: z.array(FleetNode),
  /**
   * The migration's burn-down: nodes by phase over time, from Prometheus history (`--source prometheus`
   * only; absent from the other sources, which see only now). Oldest first.
   */
  history: z.array(z.object({ at: z.string().datetime(), byPhase: counts })).optional(),
  /** Why the history could not be read (the report itself stands without it). */
  historyError: z.string().optional(),
});
export type FleetReport = z.infer<typeof FleetReport>;

export function fleetReportJsonSchema(): unknown {
  return z.toJSONSchema(FleetReport, { target: "draft-2020-12" });
}
