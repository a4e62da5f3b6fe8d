import { z } from "zod";
import { ProbeError } from "./probe-error.js";

export const IpvsProtocol = z.enum(["TCP", "UDP", "SCTP", "FWM"]);

/** One IPVS virtual server. Real servers are summarised: a 10,000-Service node has 100,000 of them. */
export const VirtualServer = z.object({
  protocol: IpvsProtocol,
  /**
   * Address family. /proc/net/ip_vs does not print a firewall-mark service's family: it is taken
   * from its real servers, and null when it has none.
   */
  family: z.enum(["inet", "inet6"]).nullable(),
  /** Canonical text form (IPv6 compressed as inet_ntop does); null for a firewall-mark service. */
  address: z.string().nullable(),
  port: z.number().int().nullable(),
  fwmark: z.number().int().nullable(),
  scheduler: z.string(),
  /**
   * Flags as /proc/net/ip_vs prints them after the scheduler: "ops", "persistent". Scheduler flags
   * (sh-port, sh-fallback, mh-port) are not among them: only ipvsadm shows those.
   */
  flags: z.array(z.string()),
  /**
   * Persistence (ClientIP session affinity) timeout exactly as the kernel prints it: in jiffies, not
   * seconds, so 600 s reads 60000 with HZ=100 and 150000 with HZ=250. Null if not persistent.
   */
  persistentTimeoutJiffies: z.number().int().nullable(),
  realServers: z.number().int(),
  activeConns: z.number().int(),
  inactiveConns: z.number().int(),
});
export type VirtualServer = z.infer<typeof VirtualServer>;

export const RealServer = z.object({
  family: z.enum(["inet", "inet6"]),
  address: z.string(),
  port: z.number().int(),
  /** "Masq", "Local", "Route" (direct routing) or "Tunnel", as /proc/net/ip_vs prints it. */
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
  /** Why `timeouts` is null (kind "missing-tool" when ipvsadm is not installed); absent otherwise. */
  timeoutsError: ProbeError.optional(),
  /**
   * Traffic totals from /proc/net/ip_vs_stats (the way to watch traffic drain out of IPVS after a switch);
   * null when that file could not be read, with `statsError` saying why. Absent from older agents' reports.
   */
  stats: z
    .object({
      connections: z.number(),
      incomingPackets: z.number(),
      outgoingPackets: z.number(),
      incomingBytes: z.number(),
      outgoingBytes: z.number(),
    })
    .nullable()
    .optional(),
  statsError: ProbeError.optional(),
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
  /**
   * False when the kernel has no ip_set (no <sys>/module/ip_set): ipset is then not run at all, since
   * asking would make the kernel load the module, and `sets` is empty. Not a failure.
   */
  available: z.boolean().optional(),
  sets: z.array(
    z.object({
      name: z.string(),
      type: z.string(),
      /** From the set's header; null for types without one (bitmap:port). */
      family: z.enum(["inet", "inet6"]).nullable(),
      entries: z.number().int(),
      references: z.number().int().nullable(),
      /** One of the names kube-proxy's ipvs mode creates (KUBE-*, KUBE-6-*, including truncated ones). */
      kubeProxy: z.boolean(),
    }),
  ),
  /**
   * The NodePorts ("TCP:30080") in kube-proxy's KUBE-NODE-PORT-* sets (ipvs mode keeps every NodePort
   * there); null when those sets could not be listed, absent from older agents.
   */
  nodePorts: z.array(z.string()).nullable().optional(),
  /**
   * The ports in KUBE-HEALTH-CHECK-NODE-PORT / KUBE-6-HEALTH-CHECK-NODE-PORT: ipvs mode's list of the
   * healthCheckNodePorts its service health server listens on (pkg/proxy/ipvs/proxier.go, the
   * "Kubernetes health check node port" set); null when a set holding entries could not be listed,
   * absent from older agents.
   */
  healthCheckNodePorts: z.array(z.number().int()).nullable().optional(),
  /**
   * ipvs mode's externalTrafficPolicy: Local destinations on this node (pkg/proxy/ipvs/ipset.go):
   * `addresses` from KUBE-LOAD-BALANCER-LOCAL and KUBE-EXTERNAL-IP-LOCAL ("TCP 203.0.113.10:80"),
   * `nodePorts` from KUBE-NODE-PORT-LOCAL-* ("TCP:30080"); KUBE-6- twins included. null when a set
   * holding entries could not be listed; absent from older agents.
   */
  etpLocal: z
    .object({ addresses: z.array(z.string()), nodePorts: z.array(z.string()) })
    .nullable()
    .optional(),
});
export type IpsetFacts = z.infer<typeof IpsetFacts>;
