import type { IpvsConnectionsFacts } from "../facts/ipvs-connections.js";
import type { ProbeError } from "../facts/probe-error.js";
import { IpvsConnParser } from "../parse/ipvs-conn.js";
import { readLines } from "../../common/regular-file.js";

// ~100 bytes a connection: this bounds a runaway file, not a busy node (a million connections is 100 MB).
const MAX_BYTES = 256 * 1024 * 1024;

/**
 * Streams <procRoot>/net/ip_vs_conn through the parser. An absent file means IPVS is not loaded: no
 * IPVS connection exists (not a failure). Anything else that stops the read is a failure, never 0.
 */
export async function readIpvsConnTable(
  procRoot: string,
): Promise<{ ok: true; facts: IpvsConnectionsFacts } | { ok: false; error: ProbeError }> {
  const path = `${procRoot}/net/ip_vs_conn`;
  const parser = new IpvsConnParser();
  const r = await readLines(path, (line) => parser.push(line), MAX_BYTES);
  if (!r.ok) {
    if (!r.missing) return { ok: false, error: r.error };
    return {
      ok: true,
      facts: {
        available: false,
        entries: 0,
        established: 0,
        templates: 0,
        states: {},
        byVirtualAddress: [],
        virtualAddressCount: 0,
      },
    };
  }
  const p = parser.finish();
  if (!p.ok) return { ok: false, error: { kind: "garbage", message: p.error, command: path } };
  return { ok: true, facts: { available: true, ...p.value } };
}
