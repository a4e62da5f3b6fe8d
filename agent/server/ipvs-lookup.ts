import type { RealServer, VirtualServer } from "../facts/ipvs.js";
import type { ProbeError } from "../facts/probe-error.js";
import { readIpvsTable } from "../io/ipvs-table.js";
import type { VirtualServerQuery } from "./ipvs-query.js";

type VirtualServerLookupResult =
  | { status: "found"; virtualServer: VirtualServer; realServers: RealServer[] }
  | { status: "not-found" }
  | { status: "ipvs-absent" }
  | { status: "failed"; error: ProbeError };

export type VirtualServerLookup = (q: VirtualServerQuery) => Promise<VirtualServerLookupResult>;

/** Reads <procRoot>/net/ip_vs fresh on every call, keeping only the asked virtual server's real servers. */
export function procIpvsLookup(procRoot: string): VirtualServerLookup {
  return async (q) => {
    const r = await readIpvsTable(procRoot, { keepRealServersOf: q });
    if (!r.ok) return { status: "failed", error: r.error };
    if (!r.available) return { status: "ipvs-absent" };
    const vs = r.table.virtualServers.find(
      (v) => v.protocol === q.protocol && v.address === q.address && v.port === q.port,
    );
    if (vs === undefined || r.table.keptRealServers === null) return { status: "not-found" };
    return { status: "found", virtualServer: vs, realServers: r.table.keptRealServers };
  };
}
