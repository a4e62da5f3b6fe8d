import { z } from "zod";

// Per-Service parity between what IPVS served before the switch and what kube-proxy's nftables
// tables serve after it.

export const SNAPSHOT_FORMAT = "proxyscope-ipvs-snapshot/1" as const;

/** One kube-proxy IPVS virtual server and its real servers, as the snapshot file keeps it. */
export const SnapshotVirtualServer = z.object({
  /** "service-ip": ClusterIP, ExternalIP or LoadBalancer IP (bound on kube-ipvs0); "nodeport": a node address. */
  kind: z.enum(["service-ip", "nodeport"]),
  protocol: z.enum(["TCP", "UDP", "SCTP"]),
  address: z.string(),
  port: z.number().int().min(0).max(65535),
  /** "10.244.1.5:8080", "[fd00::5]:8080". */
  reals: z.array(z.string()),
  /**
   * A Service IP (externalIP, LoadBalancer IP) inside another interface's on-link IPv4 prefix while
   * arp_ignore was 0: off the node it was reached only because the node answered ARP for it from
   * kube-ipvs0, which nftables mode does not (service-ips-answered-by-arp). Absent: not so, or an older
   * snapshot (then `arpNotRead` of the snapshot is absent too, and nothing is known).
   */
  arpOnly: z.boolean().optional(),
});
export type SnapshotVirtualServer = z.infer<typeof SnapshotVirtualServer>;

/** The file the agent keeps while the node is in ipvs mode (the one file it writes). */
export const IpvsSnapshot = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  node: z.string(),
  /** Seconds since the epoch when IPVS was read. */
  takenAt: z.number(),
  virtualServers: z.array(SnapshotVirtualServer),
  /** Why no Service IP could be judged reached only by ARP (addresses or sysctls unread); absent: judged. */
  arpNotRead: z.string().optional(),
});
export type IpvsSnapshot = z.infer<typeof IpvsSnapshot>;

/**
 * "arp-only": an address nftables mode still serves, but that IPVS served to clients off the node only
 * because the node answered ARP for it from kube-ipvs0; nobody answers now, so it is not "same".
 */
const ParityStatus = z.enum(["same", "missing-after", "endpoints-differ", "new-after", "arp-only"]);
type ParityStatus = z.infer<typeof ParityStatus>;

export const ServiceParity = z.object({
  /**
   * kube-proxy's ServicePortName ("ns/svc:port", protocol apart) from the nftables chain names; null
   * for an address nothing serves after the switch (IPVS carries no names: the collector names it).
   */
  service: z.string().nullable(),
  protocol: z.enum(["TCP", "UDP", "SCTP"]),
  /** "10.96.0.10:53" for a Service IP, "nodeport:30080" for a NodePort. */
  addresses: z.array(z.string()),
  status: ParityStatus,
  endpointsBefore: z.number().int(),
  endpointsAfter: z.number().int(),
  /** Endpoints in IPVS before and not behind the nftables chains after (cut to a few). */
  gone: z.array(z.string()),
  added: z.array(z.string()),
  /**
   * endpoints-differ only: every endpoint behind the nftables chains after, sorted, cut to
   * AFTER_LISTED (endpointsAfter is the whole count), so the collector can hold them against the
   * Service's current EndpointSlices. Absent from older agents.
   */
  after: z.array(z.string()).optional(),
});
export type ServiceParity = z.infer<typeof ServiceParity>;

export const ParityCounts = z.object({
  same: z.number().int(),
  missingAfter: z.number().int(),
  endpointsDiffer: z.number().int(),
  newAfter: z.number().int(),
  /** Addresses with status "arp-only"; absent from older agents (not counted, never 0). */
  arpOnly: z.number().int().optional(),
});
export type ParityCounts = z.infer<typeof ParityCounts>;

const Snap = { takenAt: z.number(), ageSeconds: z.number(), maxAgeSeconds: z.number() };

export const ParityFacts = z.discriminatedUnion("state", [
  /** No snapshot path configured (`scan` without --parity-snapshot). */
  z.object({ state: z.literal("off") }),
  /** kube-proxy answers neither ipvs nor nftables (or did not answer): nothing recorded or compared. */
  z.object({ state: z.literal("not-applicable"), why: z.string() }),
  /** ipvs mode: the snapshot was written. */
  z.object({
    state: z.literal("recorded"),
    path: z.string(),
    takenAt: z.number(),
    virtualServers: z.number().int(),
    realServers: z.number().int(),
    bytes: z.number().int(),
  }),
  /** ipvs mode, but no snapshot could be written (a part of the node unread, the file too big, I/O). */
  z.object({ state: z.literal("not-recorded"), path: z.string(), why: z.string() }),
  /** nftables mode with no snapshot file: parity is unknown, not "all lost". */
  z.object({ state: z.literal("no-snapshot"), path: z.string() }),
  /** nftables mode, the file could not be read or understood. */
  z.object({ state: z.literal("corrupt"), path: z.string(), why: z.string() }),
  /** nftables mode, the snapshot is older than the limit: not compared. */
  z.object({ state: z.literal("stale"), path: z.string(), ...Snap }),
  z.object({
    state: z.literal("compared"),
    path: z.string(),
    ...Snap,
    counts: ParityCounts,
    /** Every Service not "same", cut to a bound (`truncated` then says so; the counts are whole). */
    services: z.array(ServiceParity),
    truncated: z.boolean(),
    /** The snapshot could not tell which addresses were reached only by ARP (its `arpNotRead`). */
    arpNotRead: z.string().optional(),
  }),
]);
export type ParityFacts = z.infer<typeof ParityFacts>;
