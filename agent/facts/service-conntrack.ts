import { z } from "zod";

/** How many destinations the facts list (the counts beside them are exact). */
export const LISTED = 50;

const Unread = z.object({ read: z.literal(false), why: z.string() });

/**
 * Flows in /proc/net/nf_conntrack (original direction) that show reliance on what ipvs mode does and
 * nftables mode does not. With net.ipv4.vs.conntrack=1 (ipvs mode sets it) IPVS's flows are there too,
 * under the virtual address they were sent to. Each part is read:false with why when it was not counted
 * (the table, or a fact it matches against, not read): unknown, never "none".
 */
export const ServiceConntrackFacts = z.object({
  /**
   * Flows from inside the cluster (the node's own addresses; pods by kube-proxy's clusterCIDR when
   * detectLocalMode is ClusterCIDR) to this node's externalTrafficPolicy: Local destinations: the
   * KUBE-*-LOCAL sets' LB IPs and externalIPs, and Local NodePorts on the node's own addresses.
   */
  etpLocalFromInside: z.discriminatedUnion("read", [
    z.object({
      read: z.literal(true),
      /** Which sources counted as inside: "node addresses, clusterCIDR 10.244.0.0/16", or why pods did not. */
      inside: z.string(),
      /** The busiest destinations, at most LISTED; `destinations` counts them all. */
      to: z.array(z.object({ destination: z.string(), connections: z.number().int() })),
      destinations: z.number().int(),
    }),
    Unread,
  ]),
  /** Flows to kube-ipvs0's addresses that no Service port explains: ICMP, or a port no virtual server has. */
  serviceIpsOther: z.discriminatedUnion("read", [
    z.object({
      read: z.literal(true),
      /** The busiest, at most LISTED (a port scan makes thousands); `flows` counts every kind seen. */
      to: z.array(z.object({ address: z.string(), what: z.string(), connections: z.number().int() })),
      flows: z.number().int(),
    }),
    Unread,
  ]),
});
export type ServiceConntrackFacts = z.infer<typeof ServiceConntrackFacts>;
