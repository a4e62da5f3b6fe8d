import type { ParityFacts } from "../facts/parity.js";
import { FLEET_DIGEST_VERSION, type DigestParity, type FleetDigest } from "../report/fleet-digest.js";
import type { NodeReport } from "../report/schema.js";
import { summaryOf } from "./summary.js";

// Derived from the report and its view, so it lives with the view: report/ holds only the schema.
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
    osPrettyName: r.facts.osRelease?.prettyName ?? null,
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
    // Only a comparison says which addresses were reached by ARP alone; any other state says nothing.
    ...(compared
      ? {
          arpOnly: compared.services
            .filter((s) => s.status === "arp-only")
            .flatMap((s) => s.addresses.map((a) => `${a}/${s.protocol}`)),
        }
      : {}),
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
