import { z } from "zod";
import { ParityCounts } from "../facts/parity.js";
import { Finding, Phase, Verdict } from "./schema.js";

/**
 * GET /report/fleet: what the fleet collector's rollup reads of a NodeReport, and nothing else (issue
 * The fleet digest). The full report is ~180 KB at 1,000 Services in ipvs mode, almost all of it addresses,
 * kube-ipvs0 and the IPVS table the rollup only counts; parsing and validating that was a third of a
 * 5,000-node gather's CPU. This is a document of its own, validated whole by the collector, so a broken
 * one is still garbage; it is derived from the report by view/fleet-digest.ts fleetDigestOf, the one function that says how.
 */

/** Bumped on any change a consumer could trip over, as SCHEMA_VERSION is (and with it, when that is). */
export const FLEET_DIGEST_VERSION = "1" as const;

/** One "endpoints differ" Service port as the agent saw it after the switch. */
export const ParityDiffer = z.object({
  /** kube-proxy's ServicePortName, "ns/svc:port" ("ns/svc" for an unnamed port). */
  service: z.string(),
  protocol: z.string(),
  endpointsAfter: z.number().int(),
  /** The nftables endpoints after, cut by the agent; null from an agent that does not send them. */
  after: z.array(z.string()).nullable(),
  gone: z.array(z.string()),
  added: z.array(z.string()),
});
export type ParityDiffer = z.infer<typeof ParityDiffer>;

/** facts.parity cut to what the fleet acts on: the state, the counts and each flagged Service port. */
export const DigestParity = z.object({
  /** facts.parity.state: an open set (a newer agent may add a state), so a string. */
  state: z.string(),
  snapshotAgeSeconds: z.number().nullable(),
  counts: ParityCounts.nullable(),
  /** "10.96.0.20:80/TCP", "nodeport:30080/TCP": each address of each Service port missing after. */
  lost: z.array(z.string()),
  differ: z.array(ParityDiffer),
  /**
   * "192.168.1.50:80/TCP": addresses nftables mode still serves that off-node clients reached only by
   * the node's ARP answer from kube-ipvs0 (parity status "arp-only"). Absent from older agents.
   */
  arpOnly: z.array(z.string()).optional(),
});
export type DigestParity = z.infer<typeof DigestParity>;

export const FleetDigest = z.object({
  schemaVersion: z.literal(FLEET_DIGEST_VERSION),
  agentVersion: z.string(),
  node: z.string(),
  scannedAt: z.string().datetime(),
  phase: Phase,
  /** kube-proxy did not say its mode and the phase was inferred from kernel state. */
  phaseInferred: z.boolean().nullable(),
  verdict: Verdict,
  /** Whole, evidence and remedy included: the fleet report shows them. */
  findings: z.array(Finding),
  /** facts.kernel.release; null: the kernel probe failed. */
  kernelRelease: z.string().nullable(),
  /** facts.osRelease.prettyName; null: os-release not read or without one. Absent from older agents. */
  osPrettyName: z.string().nullable().optional(),
  kernelNftablesCapable: z.boolean().nullable(),
  /** Probes that failed: their facts are missing, not zero. */
  failedProbes: z.array(z.string()),
  /** null: not read (the IPVS table or kube-ipvs0 could not be read, or IPVS is not loaded). */
  ipvsVirtualServers: z.number().int().nullable(),
  kubeIpvs0Addresses: z.number().int().nullable(),
  blackHoledAddresses: z.number().int().nullable(),
  /** null: the parity probe failed. */
  parity: DigestParity.nullable(),
});
export type FleetDigest = z.infer<typeof FleetDigest>;

export function fleetDigestJsonSchema(): unknown {
  return z.toJSONSchema(FleetDigest, { target: "draft-2020-12" });
}
