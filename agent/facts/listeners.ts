import { z } from "zod";
import { AddressFamily } from "./host.js";

const ListenerSocket = z.object({
  family: AddressFamily,
  /** The bound address; "0.0.0.0" or "::" is every address of the node. */
  address: z.string(),
  port: z.number().int(),
  /** true: held by kube-proxy's process; false: by another one; null: whose could not be traced. */
  kubeProxy: z.boolean().nullable(),
});
type ListenerSocket = z.infer<typeof ListenerSocket>;

export const ListenersFacts = z.object({
  /** TCP sockets in LISTEN state in the node's network namespace (/proc/net/tcp and tcp6). */
  tcp: z.array(ListenerSocket),
  /**
   * kube-proxy's process, traced through the socket its metrics URL reaches to the one process holding it
   * (/proc/<pid>/fd), or why not: the DaemonSet has no hostPID, so there it is "not traced".
   */
  kubeProxyProcess: z.discriminatedUnion("traced", [
    z.object({ traced: z.literal(true), pid: z.number().int() }),
    z.object({ traced: z.literal(false), why: z.string() }),
  ]),
  /**
   * kube-proxy's healthCheckNodePorts and how they are known: ipvs mode's KUBE-HEALTH-CHECK-NODE-PORT
   * set, else the ports kube-proxy's traced process listens on besides its metrics and health ports;
   * known:false when neither could be read.
   */
  healthCheckPorts: z.discriminatedUnion("known", [
    z.object({
      known: z.literal(true),
      ports: z.array(z.number().int()),
      source: z.enum(["ipset", "kube-proxy-sockets"]),
    }),
    z.object({ known: z.literal(false), why: z.string() }),
  ]),
  /**
   * Connections in /proc/net/nf_conntrack to kube-proxy's health-check NodePorts, by destination
   * address and port (original direction); read:false with why when the table was not read in full
   * (no nf_conntrack procfs, over the cap, no port to count): unknown, never "none".
   */
  conntrack: z.discriminatedUnion("read", [
    z.object({
      read: z.literal(true),
      to: z.array(z.object({ address: z.string(), port: z.number().int(), connections: z.number().int() })),
    }),
    z.object({ read: z.literal(false), why: z.string() }),
  ]),
});
export type ListenersFacts = z.infer<typeof ListenersFacts>;
