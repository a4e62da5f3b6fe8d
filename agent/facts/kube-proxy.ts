import { z } from "zod";

/** What /proxyMode answered: the mode kube-proxy really runs, verbatim. */
export const ProxyModeFacts = z.object({ mode: z.string() });
export type ProxyModeFacts = z.infer<typeof ProxyModeFacts>;

/** The parts of /configz (KubeProxyConfiguration) that any check reads. */
export const ConfigzFacts = z.object({
  mode: z.string(),
  nodePortAddresses: z.array(z.string()),
  featureGates: z.record(z.string(), z.boolean()),
  ipvs: z.object({
    scheduler: z.string(),
    strictARP: z.boolean(),
    tcpTimeout: z.string().nullable(),
    tcpFinTimeout: z.string().nullable(),
    udpTimeout: z.string().nullable(),
    excludeCIDRs: z.array(z.string()),
  }),
  nftablesTableName: z.string().nullable(),
  conntrackTcpBeLiberal: z.boolean().nullable(),
  metricsBindAddress: z.string().nullable(),
  healthzBindAddress: z.string().nullable(),
  detectLocalMode: z.string().nullable(),
  clusterCIDR: z.string().nullable(),
});
export type ConfigzFacts = z.infer<typeof ConfigzFacts>;

const MetricSample = z.object({
  type: z.string().nullable(),
  /** Sum over all series of the family (a histogram's _count/_sum are separate names). */
  value: z.number(),
  series: z.number().int(),
  /** Smallest and largest series: for per-family gauges such as the last sync timestamp (v1.33+). */
  min: z.number(),
  max: z.number(),
  /**
   * Sums by the value of a label whose values kube-proxy bounds ("traffic_policy": internal | external),
   * for the families that carry one. Absent: the family has no such label, or an older agent read it.
   */
  byLabel: z.record(z.string(), z.record(z.string(), z.number())).optional(),
});

export const KubeProxyMetricsFacts = z.object({
  /** kube-proxy's own families we read, by name; a name absent here was not exported. */
  metrics: z.record(z.string(), MetricSample),
  /** From kubernetes_build_info{git_version}. */
  gitVersion: z.string().nullable(),
  familyCount: z.number().int(),
});
export type KubeProxyMetricsFacts = z.infer<typeof KubeProxyMetricsFacts>;

export const KubeProxyHealthFacts = z.object({
  status: z.number().int(),
  /** "v1.33+" carries `healthy` and per-family `status`; older versions print Go-style times only. */
  shape: z.enum(["v1.33+", "legacy", "unknown"]),
  healthy: z.boolean().nullable(),
  lastUpdated: z.string().nullable(),
  currentTime: z.string().nullable(),
  nodeEligible: z.boolean().nullable(),
});
export type KubeProxyHealthFacts = z.infer<typeof KubeProxyHealthFacts>;
