import { z } from "zod";

/**
 * How fresh one expensive source of the report is: read in this scan, or reused from an earlier one
 * because its gate stood still (nftables, iptables-nft: the nf_tables generation; ipvs, addresses,
 * ipsets: kube-proxy's ipvs-mode sync state and cheap fingerprints), or, for ipvs-connections, because
 * its own read interval had not passed. The names are a closed list so the metric's `source` label
 * stays bounded.
 */
const SOURCE_NAMES = [
  "nftables",
  "kube-proxy-nft",
  "iptables-nft",
  "ip6tables-nft",
  "ipvs",
  "addresses",
  "ipsets",
  "ipvs-connections",
] as const;
export const SourceFreshness = z.object({
  source: z.enum(SOURCE_NAMES),
  /** When the data the report holds for this source was read from the node. */
  readAt: z.string().datetime(),
  /** Seconds between that read and the end of this scan. */
  ageSeconds: z.number().nonnegative(),
  /** true: reused from an earlier scan, its gate unchanged; false: read in this scan. */
  reused: z.boolean(),
  /** Why it was read again, or what let it be reused. */
  why: z.string(),
});
export type SourceFreshness = z.infer<typeof SourceFreshness>;
