import { z } from "zod";

/**
 * How the nft of kube-proxy's image reads this node's sets, asked of the witness the agent's image
 * carries (io/tools.ts: Debian bookworm's nft 1.0.6 in /opt/nft-kube-proxy, apart from the agent's own
 * nft). nft 1.0.6 dies by SIGSEGV listing a set nft >= 1.1.2 wrote (kubernetes/kubernetes#136786), and
 * kube-proxy's sync with it; the agent's own nft (trixie's 1.1.3) reads such sets, so only the witness
 * still shows the crash on the node itself.
 */
export const KubeProxyNftFacts = z.object({
  /**
   * ok: it listed every set; crashed: killed by a signal (SIGSEGV is #136786's crash); failed: it ran
   * but did not answer (a timeout, an exit status); not-present: this agent has no witness (a host
   * binary, a build without it), which is "not asked", never "no crash".
   */
  outcome: z.enum(["ok", "crashed", "failed", "not-present"]),
  /** The witness's nft version as its image stage recorded it ("1.0.6"); null when it could not be read. */
  version: z.string().nullable(),
  /** What was run (the witness and its arguments). */
  command: z.string(),
  /** The signal that killed it (crashed only). */
  signal: z.string().optional(),
  detail: z.string(),
});
export type KubeProxyNftFacts = z.infer<typeof KubeProxyNftFacts>;
