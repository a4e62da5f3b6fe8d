import { SEVERITIES } from "../../agent/contract.js";
import { findingPageUrl } from "../../common/finding-page.js";
import type { ObservedPhase } from "../checks/config-source.js";
import type { TargetNode, TargetVersion } from "../checks/target-version.js";
import type { ClusterFacts } from "../report/cluster-facts.js";
import { CLUSTER_RULES, FLAG_RULES, type ClusterFindingId } from "./catalogue.js";
import type { ClusterRule, FlagRule, JudgedFinding, RuleFinding } from "./rule.js";

export type ClusterFinding = JudgedFinding<ClusterFindingId>;

/** Each finding's reference is its page, derived from the id so no check can point elsewhere. */
function withPages(findings: readonly RuleFinding<ClusterFindingId>[]): ClusterFinding[] {
  return findings.map((f) => ({ ...f, reference: findingPageUrl(f.id) }));
}

/** Every check over the API's view of the cluster. Pure; findings come back worst first. */
export function clusterChecks(facts: ClusterFacts, observed: readonly ObservedPhase[]): ClusterFinding[] {
  const input = { facts, observed };
  const found = (CLUSTER_RULES as readonly ClusterRule<ClusterFindingId>[]).flatMap((r) => r.evaluate(input));
  return withPages(found).sort((a, b) => SEVERITIES.indexOf(b.severity) - SEVERITIES.indexOf(a.severity));
}

/** The checks a flag asked for, in their catalogue order. */
export function flagChecks(
  facts: ClusterFacts | null,
  phases: readonly TargetNode[],
  targetVersion: TargetVersion,
): ClusterFinding[] {
  const input = { facts, phases, targetVersion };
  return withPages((FLAG_RULES as readonly FlagRule<ClusterFindingId>[]).flatMap((r) => r.evaluate(input)));
}

export interface ClusterJudgeInput {
  /** null when no API server was asked: the checks over it say nothing. */
  facts: ClusterFacts | null;
  observed: readonly ObservedPhase[];
  phases: readonly TargetNode[];
  targetVersion: TargetVersion | null;
}

/** Every cluster finding the report carries: the API's checks worst first, then what flags asked for. */
export function judgeCluster(input: ClusterJudgeInput): ClusterFinding[] {
  return [
    ...(input.facts ? clusterChecks(input.facts, input.observed) : []),
    ...(input.targetVersion ? flagChecks(input.facts, input.phases, input.targetVersion) : []),
  ];
}
