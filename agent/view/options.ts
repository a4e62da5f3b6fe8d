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
