import { z } from "zod";
import { ParityCounts, type ParityFacts } from "../facts/parity.js";
import { summaryOf } from "../view/summary.js";
import { Finding, Phase, Verdict, type NodeReport } from "./schema.js";

/**
 * GET /report/fleet: what the fleet collector's rollup reads of a NodeReport, and nothing else (issue
 * #14 row f). The full report is ~180 KB at 1,000 Services in ipvs mode, almost all of it addresses,
 * kube-ipvs0 and the IPVS table the rollup only counts; parsing and validating that was a third of a
 * 5,000-node gather's CPU. This is a document of its own, validated whole by the collector, so a broken
 * one is still garbage; it is derived from the report by fleetDigestOf, the one function that says how.
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

/** The digest of a report: the agent renders it once per scan, the collector makes it of an older agent's /report. */
export function fleetDigestOf(r: NodeReport): FleetDigest {
  const view = summaryOf(r);
  return {
    schemaVersion: FLEET_DIGEST_VERSION,
    agentVersion: r.agentVersion,
    node: r.node,
    scannedAt: r.scannedAt,
    phase: r.phase,
    phaseInferred: view.phaseInferred ?? null,
    verdict: r.verdict,
    findings: r.findings,
    kernelRelease: r.facts.kernel?.release ?? null,
    kernelNftablesCapable: view.kernelNftablesCapable,
    failedProbes: r.probes.filter((p) => !p.ok).map((p) => p.name),
    ipvsVirtualServers: r.facts.ipvs?.available ? r.facts.ipvs.virtualServerCount : null,
    kubeIpvs0Addresses: r.facts.kubeIpvs0 ? r.facts.kubeIpvs0.addresses.length : null,
    blackHoledAddresses: view.blackHoledAddresses,
    // A fact dropped as unknown by a tolerant reader is absent, and absent is not read.
    parity: r.facts.parity ? digestParity(r.facts.parity) : null,
  };
}

function digestParity(p: ParityFacts): DigestParity {
  const compared = p.state === "compared" ? p : null;
  return {
    state: p.state,
    snapshotAgeSeconds: "ageSeconds" in p ? p.ageSeconds : null,
    counts: compared ? compared.counts : null,
    lost: (compared?.services ?? [])
      .filter((s) => s.status === "missing-after")
      .flatMap((s) => s.addresses.map((a) => `${a}/${s.protocol}`)),
    differ: (compared?.services ?? []).flatMap((s) =>
      s.status === "endpoints-differ" && s.service !== null
        ? [
            {
              service: s.service,
              protocol: s.protocol,
              endpointsAfter: s.endpointsAfter,
              after: s.after ?? null,
              gone: s.gone,
              added: s.added,
            },
          ]
        : [],
    ),
  };
}
