import { z } from "zod";
import {
  AddressesFacts,
  KernelFacts,
  KernelModulesFacts,
  NftVersionFacts,
  OsReleaseFacts,
  SysctlFacts,
} from "./host.js";
import { IpsetFacts, IpvsFacts, KubeIpvs0Facts } from "./ipvs.js";
import { IpRulesFacts } from "./ip-rules.js";
import { IpvsConnectionsFacts } from "./ipvs-connections.js";
import { ConfigzFacts, KubeProxyHealthFacts, KubeProxyMetricsFacts, ProxyModeFacts } from "./kube-proxy.js";
import { IptablesFacts, NftablesFacts } from "./netfilter.js";
import { KubeProxyNftFacts } from "./kube-proxy-nft.js";
import { ListenersFacts } from "./listeners.js";
import { ParityFacts } from "./parity.js";
import { ServiceConntrackFacts } from "./service-conntrack.js";
import { SysctlConfigFacts } from "./sysctl-config.js";
import type { ProbeError } from "./probe-error.js";

/**
 * Every part of the node the report holds: the probe that reads it, its key in the report's facts and
 * its schema. The one list a new probe joins (its reader goes in probes/, listed in probes/registry.ts,
 * which the compiler holds in step with this); PROBE_NAMES, FACT_KEY and NodeFacts derive from it.
 * It lives here, not in the probe files, because the report's wire schema must not load I/O code.
 */
export const FACT_SOURCES = [
  { probe: "kernel", key: "kernel", schema: KernelFacts },
  { probe: "os-release", key: "osRelease", schema: OsReleaseFacts },
  { probe: "nft-version", key: "nftVersion", schema: NftVersionFacts },
  { probe: "kernel-modules", key: "kernelModules", schema: KernelModulesFacts },
  { probe: "sysctls", key: "sysctls", schema: SysctlFacts },
  { probe: "sysctl-config", key: "sysctlConfig", schema: SysctlConfigFacts },
  { probe: "addresses", key: "addresses", schema: AddressesFacts },
  { probe: "ip-rules", key: "ipRules", schema: IpRulesFacts },
  { probe: "ipvs", key: "ipvs", schema: IpvsFacts },
  { probe: "ipvs-connections", key: "ipvsConnections", schema: IpvsConnectionsFacts },
  { probe: "kube-ipvs0", key: "kubeIpvs0", schema: KubeIpvs0Facts },
  { probe: "ipsets", key: "ipsets", schema: IpsetFacts },
  { probe: "iptables", key: "iptables", schema: IptablesFacts },
  { probe: "nftables", key: "nftables", schema: NftablesFacts },
  { probe: "kube-proxy-nft", key: "kubeProxyNft", schema: KubeProxyNftFacts },
  { probe: "kube-proxy-mode", key: "proxyMode", schema: ProxyModeFacts },
  { probe: "kube-proxy-configz", key: "configz", schema: ConfigzFacts },
  { probe: "kube-proxy-metrics", key: "kubeProxyMetrics", schema: KubeProxyMetricsFacts },
  { probe: "kube-proxy-health", key: "kubeProxyHealth", schema: KubeProxyHealthFacts },
  { probe: "parity", key: "parity", schema: ParityFacts },
  { probe: "listeners", key: "listeners", schema: ListenersFacts },
  { probe: "service-conntrack", key: "serviceConntrack", schema: ServiceConntrackFacts },
] as const;

type Source = (typeof FACT_SOURCES)[number];
export type ProbeName = Source["probe"];
export type FactKey = Source["key"];
type SourceOf<N extends ProbeName> = Extract<Source, { probe: N }>;
/** The facts probe N reads. */
export type FactsOf<N extends ProbeName> = z.infer<SourceOf<N>["schema"]>;

export const PROBE_NAMES = FACT_SOURCES.map((s) => s.probe) as readonly ProbeName[];

export const FACT_KEY = Object.fromEntries(FACT_SOURCES.map((s) => [s.probe, s.key])) as {
  readonly [N in ProbeName]: SourceOf<N>["key"];
};

export function factSchema<N extends ProbeName>(name: N): SourceOf<N>["schema"] {
  return FACT_SOURCES.find((s) => s.probe === name)!.schema as SourceOf<N>["schema"];
}

type NodeFactsShape = {
  [S in Source as S["key"]]: z.ZodDefault<z.ZodNullable<S["schema"]>>;
};

/**
 * null: the probe failed or did not run. A key missing on the wire reads as null, so a collector
 * knowing a newer probe still takes reports from older agents (and unknown keys are dropped, so an
 * older collector takes reports from newer ones).
 */
export const NodeFacts = z.object(
  Object.fromEntries(
    FACT_SOURCES.map((s) => [s.key, (s.schema as z.ZodType).nullable().default(null)]),
  ) as NodeFactsShape,
);
export type NodeFacts = z.infer<typeof NodeFacts>;

export type ProbeOutcome<F> = { ok: true; facts: F } | { ok: false; error: ProbeError };

/** One probe's run in a scan, as the report is built from it. */
export interface ProbeRun {
  name: ProbeName;
  outcome: ProbeOutcome<unknown>;
  durationMs: number;
}
