/**
 * Both programs' exit codes, one meaning each, so a script or a CronJob can tell "fix your flags" from
 * "the cluster could not be read" from "proxyscope has a bug".
 */
export const EXIT = {
  /** Done, and nothing reached --fail-on; verify passed. */
  ok: 0,
  /** A finding or node reached --fail-on (a partial report under --fail-on unanswered), or verify failed. */
  findings: 1,
  /**
   * Bad flags or an unknown command, or flags that cannot work: a --listen/--port that cannot be listened
   * on, an --agents-file that is not a list of agents. Nothing was read from a node or the cluster.
   */
  usage: 2,
  /** A bug: an exception escaped. */
  internalError: 3,
  /** `proxyscope-agent cleanup --apply` refused: kube-proxy on this node does not answer nftables mode. */
  refused: 4,
  /** Valid flags, but no report could be made (API, Prometheus or every agent unreachable, no such Service). */
  noReport: 5,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
