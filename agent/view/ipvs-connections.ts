import type { IpvsConnectionsTo, KubeProxyIpvsConnections } from "../facts/ipvs-connections.js";
import { vsKey } from "../parse/ipvs-proc.js";
import type { NodeFacts } from "../report/schema.js";
import type { VirtualServerClasses } from "./virtual-servers.js";

/** How many of kube-proxy's busiest virtual servers the report names (the counts cover all of them). */
const TOP_CONNECTED = 10;

/**
 * IPVS connections through kube-proxy's virtual servers (view/virtual-servers.ts: Service IPs and
 * NodePorts), the ones nftables mode's start cuts. null whenever a part it needs was not read or was cut:
 * the connection table, the whole IPVS table, kube-ipvs0 or the addresses (without the last two nothing
 * is known to be kube-proxy's) — never a 0 that only means "not looked at".
 */
export function kubeProxyIpvsConnections(
  f: NodeFacts,
  classes: VirtualServerClasses,
): KubeProxyIpvsConnections | null {
  const c = f.ipvsConnections;
  if (c === null || f.ipvs === null || f.kubeIpvs0 === null || f.addresses === null) return null;
  if (f.ipvs.virtualServers.length !== f.ipvs.virtualServerCount) return null;
  if (c.byVirtualAddress.length !== c.virtualAddressCount) return null;
  const kinds = new Map<string, "service" | "nodePort">([
    ...classes.services.map((v) => [vsKey(v), "service"] as const),
    ...classes.nodePorts.map((v) => [vsKey(v), "nodePort"] as const),
  ]);
  let established = 0;
  let other = 0;
  const through: KubeProxyIpvsConnections["top"] = [];
  for (const a of c.byVirtualAddress) {
    const key = vsKey({ ...a, fwmark: null });
    const kind = kinds.get(key);
    if (kind === undefined) continue;
    established += a.established;
    other += a.other;
    through.push({ virtualServer: key, kind, established: a.established, other: a.other });
  }
  through.sort(
    (x, y) =>
      y.established - x.established ||
      y.other - x.other ||
      (x.virtualServer < y.virtualServer ? -1 : x.virtualServer > y.virtualServer ? 1 : 0),
  );
  return { established, other, virtualServers: through.length, top: through.slice(0, TOP_CONNECTED) };
}

/** Connections to some virtual addresses: what deleting them cuts; null when the table was not read (or was cut). */
export function connectionsTo(
  f: NodeFacts,
  matches: (a: IpvsConnectionsTo) => boolean,
): { established: number; other: number } | null {
  const c = f.ipvsConnections;
  if (c === null || c.byVirtualAddress.length !== c.virtualAddressCount) return null;
  let established = 0;
  let other = 0;
  for (const a of c.byVirtualAddress) {
    if (!matches(a)) continue;
    established += a.established;
    other += a.other;
  }
  return { established, other };
}

/** The sentence a remedy that deletes IPVS state adds: how many live connections it cuts. */
export function cutSentence(n: { established: number; other: number } | null): string {
  if (n === null)
    return "; the connections through it were not read (ipvsadm -L -n -c shows them): drain the node first if any are live";
  if (n.established === 0) return "; no established connection runs through it";
  return `; this cuts ${n.established} established connections through it (${n.other} other entries): drain the node first if they matter`;
}

/** A cleanup step's note on the connections it cuts ("" when none is established). */
export function cutNote(n: { established: number; other: number } | null, through: string): string {
  if (n === null) return `; connections ${through} not read (ipvsadm -L -n -c)`;
  return n.established === 0 ? "" : `; ${n.established} established connections ${through} would be cut`;
}
