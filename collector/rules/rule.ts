import type { Finding, Severity } from "../../agent/contract.js";
import type { ObservedPhase } from "../checks/config-source.js";
import type { TargetNode, TargetVersion } from "../checks/target-version.js";
import type { ClusterFacts } from "../report/cluster-facts.js";

export type Stage = Finding["stage"];

/** What a cluster finding means to the fleet plan; the plan's id lists derive from these. */
export type ClusterTag =
  /** Configuration ipvs mode left in kube-proxy's config, which the plan's last step removes. */
  "config-after-switch";

export interface ClusterFindingSpec {
  severity: Severity | readonly Severity[];
  stage: Stage | readonly Stage[];
  tags?: readonly ClusterTag[];
}

/** What a rule over the API's view of the cluster reads. */
interface ClusterRuleInput {
  facts: ClusterFacts;
  /** What the answered nodes run, and whether kube-proxy said so itself. */
  observed: readonly ObservedPhase[];
}

/** What a rule the user asked for with a flag reads: it runs with or without the API's facts. */
interface FlagRuleInput {
  /** null when no API server was asked (static source). */
  facts: ClusterFacts | null;
  /** Every node, with what it runs; phase null when it did not answer. */
  phases: readonly TargetNode[];
  targetVersion: TargetVersion;
}

/** The parts of the cluster facts a rule reads, besides what the nodes answered or a flag. */
export type ClusterNeed = keyof ClusterFacts | "observed";
export type FlagNeed = keyof ClusterFacts | "phases" | "targetVersion";

/** What a rule says; its `reference` (the link to the finding's page) is added from the id. */
export type RuleFinding<Id extends string> = Omit<Finding, "id" | "reference"> & { id: Id };

/** A finding as the fleet report carries it. */
export type JudgedFinding<Id extends string> = Omit<Finding, "id"> & { id: Id };

interface RuleOf<Id extends string, In, Need extends string> {
  /** Ids are stable across releases: alerts, dashboards, suppressions and the fleet plan key on them. */
  findings: { readonly [K in Id]: ClusterFindingSpec };
  /** What it reads: documentation, and the catalogue's CLUSTER_FINDING_NEEDS. */
  needs: readonly Need[];
  evaluate(input: In): RuleFinding<Id>[];
}

/** A check over the API's view of the cluster: runs whenever the API was asked. */
export type ClusterRule<Id extends string = string> = RuleOf<Id, ClusterRuleInput, ClusterNeed>;
/** A check a flag asks for (`--target-version`): runs only with the flag, API or not. */
export type FlagRule<Id extends string = string> = RuleOf<Id, FlagRuleInput, FlagNeed>;

export function rule<const Id extends string>(r: ClusterRule<Id>): ClusterRule<Id> {
  return r;
}

export function flagRule<const Id extends string>(r: FlagRule<Id>): FlagRule<Id> {
  return r;
}
