import type { ProbeError } from "../facts/probe-error.js";
import type { Finding, NodeFacts, Phase, Severity } from "../report/schema.js";
import type { NodeView } from "../view/build.js";
import type { RuleOptions } from "../view/options.js";

type Stage = Finding["stage"];

/** What a finding means to whoever acts on it; every id list (verdict, fleet plan) derives from these. */
export type Tag =
  /** State ipvs mode left behind: the node's verdict is "leftovers". */
  | "leftover"
  /** The fleet plan measures it on the nodes before switching a pool. */
  | "measure-before-switch"
  /** The fleet plan changes configuration for it after the switch. */
  | "config-after-switch"
  /** Why the node should move, not something in the way of moving. */
  | "why-move"
  /** A hole in the scan: the node is never called ready or clean over it. */
  | "scan-incomplete";

export interface FindingSpec {
  severity: Severity | readonly Severity[];
  stage: Stage | readonly Stage[];
  tags?: readonly Tag[];
}

interface RuleInput {
  facts: NodeFacts;
  /** What the facts mean, derived once: phase, running mode, black holes, what is kube-proxy's. */
  view: NodeView;
  /** Probes that failed, with why: a rule that needs one of them says nothing rather than guessing. */
  failedProbes: ReadonlyMap<string, ProbeError>;
  /** Seconds since the epoch at the end of the scan (rules never read the clock). */
  now: number;
  /**
   * The previous scan's kube-proxy readings (the serve loop keeps them; null for a single scan): a
   * cumulative failure counter is a current failure only when it rose since.
   */
  previous: PreviousScan | null;
}

export type PreviousScan = Pick<NodeFacts, "kubeProxyMetrics" | "proxyMode">;

/** What a rule says; its `reference` (the link to the finding's page) is added from the id by judge(). */
export type RuleFinding<Id extends string> = Omit<Finding, "id" | "reference"> & { id: Id };

/** A finding as the report carries it. */
export type JudgedFinding<Id extends string> = Omit<Finding, "id"> & { id: Id };

/** One check of the migration guide: the findings it can raise, the facts it reads, and how it judges. */
export interface Rule<Id extends string = string> {
  /** Ids are stable across releases: alerts, dashboards, suppressions and the fleet plan key on them. */
  findings: { readonly [K in Id]: FindingSpec };
  /** The facts it reads (besides the view); a failed probe there means it says nothing. */
  needs: readonly (keyof NodeFacts)[];
  evaluate(input: RuleInput, opts: RuleOptions): RuleFinding<Id>[];
}

export function rule<const Id extends string>(r: Rule<Id>): Rule<Id> {
  return r;
}

/** Phases in which kube-proxy still runs an iptables-family mode and the switch is ahead. */
export const BEFORE_SWITCH: ReadonlySet<Phase> = new Set(["ipvs", "iptables"]);

/** A list for evidence, cut to `max` entries; pair it with a count. */
export function listed(items: readonly string[], max: number): string[] {
  return items.length > max ? [...items.slice(0, max), `… and ${items.length - max} more`] : [...items];
}

/**
 * Below kernel 5.13 the node's next mode is iptables, not nftables (kernel-too-old-for-nftables: "until then
 * set mode: iptables"): advice about what nftables mode does differently does not apply there. A kernel not
 * read is not old: the advice stands.
 */
export function nextModeIsIptables(view: Pick<NodeView, "kernelNftablesCapable">): boolean {
  return view.kernelNftablesCapable === false;
}
