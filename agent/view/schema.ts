import { z } from "zod";

/**
 * The part of the derived view a report carries on the wire: what a reader of the report cannot rebuild
 * from its facts, because lists there are cut for size (the black-hole count needs the whole IPVS
 * table). Optional in NodeReport: reports from agents that predate it still parse.
 */
export const ViewSummary = z.object({
  runningMode: z.string().nullable(),
  kernelNftablesCapable: z.boolean().nullable(),
  hostNftNewEnough: z.boolean().nullable(),
  /** null: kube-ipvs0 or the IPVS table was not read. */
  blackHoledAddresses: z.number().int().nullable(),
});
export type ViewSummary = z.infer<typeof ViewSummary>;
