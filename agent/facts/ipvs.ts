import { z } from "zod";

export const IpvsProtocol = z.enum(["TCP", "UDP", "SCTP", "FWM"]);

/** One IPVS virtual server. Real servers are summarised: a 10,000-Service node has 100,000 of them. */
export const VirtualServer = z.object({
  protocol: IpvsProtocol,
  family: z.enum(["inet", "inet6"]),
  /** Canonical text form (IPv6 compressed); null for a firewall-mark service. */
  address: z.string().nullable(),
  port: z.number().int().nullable(),
  fwmark: z.number().int().nullable(),
  scheduler: z.string(),
  /** Flags as /proc/net/ip_vs prints them after the scheduler ("persistent", "ops", ...). */
  flags: z.array(z.string()),
  /** Persistence timeout in seconds (the kernel prints jiffies-derived seconds), null if not persistent. */
  persistentTimeoutS: z.number().nullable(),
  realServers: z.number().int(),
  activeConns: z.number().int(),
  inactiveConns: z.number().int(),
});
export type VirtualServer = z.infer<typeof VirtualServer>;

export const RealServer = z.object({
  address: z.string(),
  port: z.number().int(),
  forward: z.string(),
  weight: z.number().int(),
  activeConns: z.number().int(),
  inactiveConns: z.number().int(),
});
export type RealServer = z.infer<typeof RealServer>;

export const IpvsFacts = z.object({
  /** False when the kernel has no IPVS loaded (/proc/net/ip_vs absent): not a failure. */
  available: z.boolean(),
  virtualServerCount: z.number().int(),
  realServerCount: z.number().int(),
  /** Virtual servers by scheduler name, e.g. { rr: 9990, lc: 10 }. */
  schedulers: z.record(z.string(), z.number().int()),
  virtualServers: z.array(VirtualServer),
  /** From `ipvsadm -L --timeout` (seconds); null when ipvsadm could not say. */
  timeouts: z.object({ tcp: z.number(), tcpFin: z.number(), udp: z.number() }).nullable(),
});
export type IpvsFacts = z.infer<typeof IpvsFacts>;

export const KubeIpvs0Facts = z.object({
  present: z.boolean(),
  kind: z.string().nullable(),
  operState: z.string().nullable(),
  flags: z.array(z.string()),
  addresses: z.array(
    z.object({ family: z.enum(["inet", "inet6"]), address: z.string(), prefixLen: z.number().int() }),
  ),
});
export type KubeIpvs0Facts = z.infer<typeof KubeIpvs0Facts>;

export const IpsetFacts = z.object({
  sets: z.array(
    z.object({
      name: z.string(),
      type: z.string(),
      family: z.enum(["inet", "inet6"]).nullable(),
      entries: z.number().int(),
      references: z.number().int().nullable(),
      /** One of the names kube-proxy's ipvs mode creates (KUBE-*, KUBE-6-*, including truncated ones). */
      kubeProxy: z.boolean(),
    }),
  ),
});
export type IpsetFacts = z.infer<typeof IpsetFacts>;
