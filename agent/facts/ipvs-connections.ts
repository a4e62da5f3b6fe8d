import { z } from "zod";
import { IpvsProtocol } from "./ipvs.js";

/** IPVS's connection entries to one virtual address (the address and port a client connected to). */
export const IpvsConnectionsTo = z.object({
  protocol: IpvsProtocol,
  family: z.enum(["inet", "inet6"]),
  /** Canonical text form, as VirtualServer.address, so the two compare equal. */
  address: z.string(),
  port: z.number().int(),
  /** TCP or SCTP entries in state ESTABLISHED: connections in use now. */
  established: z.number().int(),
  /** Every other entry: closing (FIN_WAIT, TIME_WAIT, ...), opening (SYN_RECV), UDP flows. */
  other: z.number().int(),
});
export type IpvsConnectionsTo = z.infer<typeof IpvsConnectionsTo>;

/**
 * IPVS's own connection table (/proc/net/ip_vs_conn). IPVS NATs these flows itself, so no conntrack NAT
 * binding carries them: kube-proxy's nftables mode flushes IPVS on start and they are cut.
 */
export const IpvsConnectionsFacts = z.object({
  /** False when the kernel has no IPVS loaded (/proc/net/ip_vs_conn absent): no IPVS, no connections. */
  available: z.boolean(),
  /** Every entry, persistence templates included. */
  entries: z.number().int(),
  /** TCP and SCTP entries in state ESTABLISHED. */
  established: z.number().int(),
  /** Session-affinity (persistence) templates: bookkeeping, no connection of their own. */
  templates: z.number().int(),
  /** Entries by the state the kernel prints (ESTABLISHED, TIME_WAIT, UDP, ...), templates excluded. */
  states: z.record(z.string(), z.number().int()),
  /** Per virtual address connected to, most established first; cut in the report, counts above stay exact. */
  byVirtualAddress: z.array(IpvsConnectionsTo),
  /** How many virtual addresses `byVirtualAddress` held before the report cut it (a cut list is no count). */
  virtualAddressCount: z.number().int(),
});
export type IpvsConnectionsFacts = z.infer<typeof IpvsConnectionsFacts>;

/** One of kube-proxy's virtual servers with connections through it (the report lists the busiest). */
const KubeProxyVirtualServerConnections = z.object({
  /** "TCP 10.96.0.1:443", as ipvsadm names a virtual server. */
  virtualServer: z.string(),
  kind: z.enum(["service", "nodePort"]),
  established: z.number().int(),
  other: z.number().int(),
});

/**
 * IPVS connections through kube-proxy's own virtual servers (Service IPs on kube-ipvs0 and NodePorts):
 * what nftables mode's start cuts. Derived before lists are cut, so the report carries it.
 */
export const KubeProxyIpvsConnections = z.object({
  /** TCP and SCTP connections in use (ESTABLISHED). */
  established: z.number().int(),
  /** Closing, opening and UDP entries: these expire on their own. */
  other: z.number().int(),
  /** How many of kube-proxy's virtual servers have any entry. */
  virtualServers: z.number().int(),
  /** The busiest, most established first, at most TOP_CONNECTED. */
  top: z.array(KubeProxyVirtualServerConnections),
});
export type KubeProxyIpvsConnections = z.infer<typeof KubeProxyIpvsConnections>;
