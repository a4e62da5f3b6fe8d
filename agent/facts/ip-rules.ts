import { z } from "zod";

/** One routing policy rule as `ip -j rule show` prints it, the selectors a Service address can be in. */
export const IpRule = z.object({
  priority: z.number().int(),
  /** `not`: the rule selects every packet its selectors do not match. */
  not: z.boolean(),
  /** "all", or the prefix's address (with `srcLen`; no length: a single address). */
  src: z.string(),
  srcLen: z.number().int().nullable(),
  /** null: no `to` selector. */
  dst: z.string().nullable(),
  dstLen: z.number().int().nullable(),
  /** The rule as `ip rule` prints it, for evidence and for confirming by hand. */
  text: z.string(),
});
export type IpRule = z.infer<typeof IpRule>;

export const IpRulesFacts = z.object({
  families: z.array(
    z.object({
      family: z.enum(["inet", "inet6"]),
      /** False when the kernel has no such family (IPv6 disabled: no /proc/net/if_inet6): not a failure. */
      available: z.boolean(),
      rules: z.array(IpRule),
    }),
  ),
});
export type IpRulesFacts = z.infer<typeof IpRulesFacts>;
