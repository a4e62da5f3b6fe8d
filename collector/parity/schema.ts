import { z } from "zod";
import { DigestParity, ParityDiffer } from "../../agent/contract.js";

// Parity in the fleet report: the node's per-Service parity after its switch, as its agent reported it,
// and what the API made of each flagged entry. Absent from sources that do not carry it (Prometheus,
// older agents): unknown, never "nothing lost".

/** One "endpoints differ" Service port as the agent saw it after the switch (its FleetDigest's). */
export { ParityDiffer };

/**
 * What the API says of a Service the agent flagged: a loss the current Service and EndpointSlices
 * confirm, a change they explain, or not confirmed (the read failed or was not made), never "fine".
 */
const ParityVerdict = z.enum(["confirmed-loss", "real-loss", "churn", "explained", "not-confirmed"]);
type ParityVerdict = z.infer<typeof ParityVerdict>;

export const ParityCheck = z.object({
  /** "shop/cart (10.96.0.20:80/TCP)" for a lost address, "web/api:https/TCP" for differing endpoints. */
  entry: z.string(),
  agent: z.enum(["missing-after", "endpoints-differ"]),
  verdict: ParityVerdict,
  severity: z.enum(["error", "warning", "info"]),
  reason: z.string(),
});
export type ParityCheck = z.infer<typeof ParityCheck>;

// The agent's own digest of its parity, as the fleet keeps it: lost addresses are named "ns/name" when
// the API's Services hold that ClusterIP or NodePort.
export const NodeParity = DigestParity.extend({
  /** The endpoints-differ entries the agent listed; absent from sources that do not carry them. */
  differ: z.array(ParityDiffer).optional(),
  /** Each flagged entry held against the Service's current EndpointSlices (the rollup fills it: parity/node.ts). */
  checks: z.array(ParityCheck).optional(),
});
export type NodeParity = z.infer<typeof NodeParity>;
