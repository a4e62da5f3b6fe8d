import type { ProbeError } from "../facts/probe-error.js";
import type { Finding, NodeFacts, Phase } from "../report/schema.js";

export interface RuleInput {
  facts: NodeFacts;
  /** Probes that failed, with why: a rule that needs one of them says nothing rather than guessing. */
  failedProbes: ReadonlyMap<string, ProbeError>;
  /** Seconds since the epoch at the end of the scan (rules never read the clock). */
  now: number;
  phase: Phase;
  /** The kube-proxy mode answered by /proxyMode, or null when it did not answer. */
  runningMode: string | null;
}

export interface RuleOptions {
  /** The API server's --service-node-port-range; kube-proxy does not publish it, so it is a setting. */
  nodePortRange: readonly [number, number];
  /** Last successful sync older than this is stale (the guide's alert threshold). */
  staleAfterS: number;
  /** Evidence lists longer than this are cut; the full count is always given. */
  maxListed: number;
}

export const DEFAULT_RULE_OPTIONS: RuleOptions = {
  nodePortRange: [30000, 32767],
  staleAfterS: 300,
  maxListed: 256,
};

export type Rule = (input: RuleInput, opts: RuleOptions) => Finding[];

/** A list for evidence, cut to `max` entries; pair it with a count. */
export function listed(items: readonly string[], max: number): string[] {
  return items.length > max ? [...items.slice(0, max), `… and ${items.length - max} more`] : [...items];
}

export function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** "v1.33.1", "1.0.6", "v1.31.0-eks-1234" -> [1, 33, 1]; null when no leading number. */
export function versionParts(v: string | null | undefined): number[] | null {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(v ?? "");
  if (!m) return null;
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
}
