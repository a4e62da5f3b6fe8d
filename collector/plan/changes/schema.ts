import { z } from "zod";

// What the switch from ipvs to nftables mode changes for each Service (docs/ipvs-to-nftables.md), for
// the application owners: the API's Services held against the nodes' findings and their evidence.
// A node whose report or needed probe was not read is named as "not known", never counted as untouched.

export const ChangeLine = z.object({
  /** namespace/name, as the API gave it. */
  service: z.string(),
  /** The row of docs/ipvs-to-nftables.md's ipvs → nftables table. */
  row: z.number().int(),
  change: z.string(),
  why: z.string(),
  doc: z.string(),
  finding: z.string(),
  findingPage: z.string(),
  /** "all nodes" or the nodes the findings name (comma-separated); "not known" when none is known. */
  where: z.string(),
  nodes: z.array(z.string()),
  /** False when no node is known to carry it but some were not read: the line stands for "not known". */
  known: z.boolean(),
  /** "node: why" for each node whose part was not read. */
  notKnown: z.array(z.string()),
  /** Addresses, ports, connections from the evidence, "node: …". */
  detail: z.array(z.string()),
  todo: z.string(),
});
export type ChangeLine = z.infer<typeof ChangeLine>;

export const ServiceChanges = z.object({
  generatedAt: z.string(),
  services: z.number().int(),
  lines: z.array(ChangeLine),
  /** What could not be said at all ("not known: …"): the Services not read, say. */
  notKnown: z.array(z.string()),
});
export type ServiceChanges = z.infer<typeof ServiceChanges>;
