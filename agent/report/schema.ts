import { z } from "zod";
import { SourceFreshness } from "../facts/freshness.js";
import { ProbeError } from "../facts/probe-error.js";
import { KubeProxyIpvsConnections } from "../facts/ipvs-connections.js";
import { NodeFacts } from "../facts/sources.js";
import { SEVERITIES } from "./severities.js";

/** Bumped on any change a consumer could trip over; the collector refuses versions it does not know. */
export const SCHEMA_VERSION = "1" as const;

export const Phase = z.enum(["ipvs", "iptables", "nftables", "none", "unknown"]);
export type Phase = z.infer<typeof Phase>;

/** ready/blocked/attention before the switch (unhealthy when broken now); clean/leftovers/attention/unhealthy after it (or with no kube-proxy): clean only with no warning or worse. */
export const Verdict = z.enum([
  "ready",
  "blocked",
  "attention",
  "clean",
  "leftovers",
  "unhealthy",
  "unknown",
]);
export type Verdict = z.infer<typeof Verdict>;

export { SEVERITIES };
export const Severity = z.enum(SEVERITIES);
export type Severity = z.infer<typeof Severity>;

export const EvidenceValue = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.string()),
  z.array(z.number()),
]);
export const Finding = z.object({
  /** Stable across releases: alerts, dashboards and suppressions key on it. */
  id: z.string(),
  severity: Severity,
  /** When the migration applies: before the switch, after it, or in any mode. */
  stage: z.enum(["before", "after", "any"]),
  /** True when the node cannot move to nftables mode until this is fixed. */
  blocksMigration: z.boolean(),
  title: z.string(),
  evidence: z.record(z.string(), EvidenceValue),
  remedy: z.string(),
  reference: z.string(),
});
export type Finding = z.infer<typeof Finding>;

export const ProbeStatus = z.object({
  name: z.string(),
  ok: z.boolean(),
  error: ProbeError.nullable(),
  durationMs: z.number(),
});
export type ProbeStatus = z.infer<typeof ProbeStatus>;

/** One entry of kernel state seen that belongs to a mode, e.g. { mode: "ipvs", evidence: "kube-ipvs0 with 12 addresses" }. */
export const ModeEvidence = z.object({
  mode: z.enum(["ipvs", "iptables", "nftables"]),
  evidence: z.string(),
});

export { NodeFacts };

/** Whether kube-proxy's rules accept NodePorts on one of the node's own addresses. */
export const NodePortAddressReach = z.object({
  address: z.string(),
  interface: z.string(),
  /** null: the part of the node that says was not read (`why` says which). */
  served: z.boolean().nullable(),
  why: z.string(),
});

/** Built from the whole IPVS table and nft sets, before lists are cut: verify's NodePort lines read it. */
export const NodePortReach = z.discriminatedUnion("read", [
  z.object({ read: z.literal(false), why: z.string() }),
  z.object({
    read: z.literal(true),
    mode: z.enum(["nftables", "ipvs"]),
    /** NodePorts kube-proxy programs; 0 leaves nothing to serve. */
    nodePorts: z.number().int(),
    /** A TCP NodePort with endpoints, for a connect; null when there is none. */
    connectPort: z.number().int().nullable(),
    addresses: z.array(NodePortAddressReach).max(100),
    /** "address (interface)" of addresses no NodePort client uses, with why (a CNI's, Docker's, a DNS cache's). */
    skipped: z.array(z.object({ seen: z.string(), why: z.string() })).max(100),
  }),
]);
export type NodePortReach = z.infer<typeof NodePortReach>;

/** ipvs mode's data plane after a rollback, from the whole IPVS table (verify --expect-mode ipvs). */
export const IpvsPlane = z.object({
  virtualServers: z.number().int(),
  withRealServers: z.number().int(),
  realServers: z.number().int(),
  /** Addresses of virtual servers on no node interface but kube-ipvs0: the Service IPs ipvs mode binds there. */
  serviceIPs: z.number().int(),
  onKubeIpvs0: z.number().int(),
  /** Service IPs with a virtual server that kube-ipvs0 does not hold (first 20). */
  missing: z.array(z.string()).max(20),
});
export type IpvsPlane = z.infer<typeof IpvsPlane>;

/**
 * The part of the derived view (agent/view/) a report carries: what a reader of the report cannot rebuild
 * from its facts, because lists there are cut for size (the black-hole count needs the whole IPVS
 * table). Optional in NodeReport: reports from agents that predate it still parse.
 */
export const ViewSummary = z.object({
  runningMode: z.string().nullable(),
  kernelNftablesCapable: z.boolean().nullable(),
  hostNftNewEnough: z.boolean().nullable(),
  /** null: kube-ipvs0 or the IPVS table was not read. */
  blackHoledAddresses: z.number().int().nullable(),
  /**
   * kube-proxy did not say its mode and the phase was inferred from kernel state; absent from agents that
   * predate it (then read phaseSource).
   */
  phaseInferred: z.boolean().optional(),
  /**
   * What a before-the-switch check saw and did not count, with why ("10.244.0.1 (cni0): ..."); absent from
   * agents that predate it.
   */
  notCounted: z.array(z.object({ check: z.string(), seen: z.string(), why: z.string() })).optional(),
  /** NodePort reach per node address; absent from agents that predate it (verify then rebuilds it from facts). */
  nodePortReach: NodePortReach.optional(),
  /** null: the IPVS table, kube-ipvs0 or the addresses were not read; absent from agents that predate it. */
  ipvsPlane: IpvsPlane.nullable().optional(),
  /**
   * IPVS connections through kube-proxy's virtual servers, which the switch cuts; null: not read (the
   * connection table, the whole IPVS table, kube-ipvs0 or the addresses); absent from agents that predate it.
   */
  ipvsConnections: KubeProxyIpvsConnections.nullable().optional(),
});
export type ViewSummary = z.infer<typeof ViewSummary>;

export const NodeReport = z.object({
  schemaVersion: z.literal(SCHEMA_VERSION),
  agentVersion: z.string(),
  node: z.string(),
  scannedAt: z.string().datetime(),
  scanDurationMs: z.number(),
  phase: Phase,
  /** How the phase was decided: kube-proxy's own /proxyMode, or inferred from kernel state. */
  phaseSource: z.enum(["proxyMode", "kernel-state", "none"]),
  /** State of more than one mode on the node at once. */
  mixed: z.array(ModeEvidence),
  verdict: Verdict,
  findings: z.array(Finding),
  /** What the facts mean, derived before lists were cut; absent from agents that predate it. */
  view: ViewSummary.optional(),
  probes: z.array(ProbeStatus),
  /**
   * How fresh each expensive source is: read in this scan or reused under an unchanged nf_tables generation.
   * Absent from agents that predate it, and from a scan that read everything afresh
   * without a cache (the one-shot `scan` command).
   */
  sources: z.array(SourceFreshness).optional(),
  /** Lists longer than the cap are cut; `truncated` names each cut list and its full length. */
  truncated: z.record(z.string(), z.number().int()),
  facts: NodeFacts,
});
export type NodeReport = z.infer<typeof NodeReport>;

export function nodeReportJsonSchema(): unknown {
  return z.toJSONSchema(NodeReport, { target: "draft-2020-12" });
}
