import type { ProbeError } from "../facts/probe-error.js";
import { IpvsProcParser, type IpvsProcOptions, type IpvsProcTable } from "../parse/ipvs-proc.js";
import { readLines } from "../../common/regular-file.js";

// /proc/net/ip_vs is 7 MB at 10,000 Services with 10 endpoints each; this only bounds a runaway file.
const MAX_BYTES = 256 * 1024 * 1024;

type IpvsTableRead =
  | { ok: true; available: true; table: IpvsProcTable }
  | { ok: true; available: false }
  | { ok: false; error: ProbeError };

/**
 * Streams <procRoot>/net/ip_vs through the parser. An absent file means IPVS is not loaded in this
 * kernel (not a failure). `keepRealServersOf` keeps one virtual server's real servers (per-Service audit).
 *
 * Kernel caveat, seen on 6.1: while another network namespace also has IPVS services, this file
 * skips services (the seq_file restarts every page and counts the other namespace's entries).
 * kube-proxy's table lives in the host namespace and is normally the only one.
 */
export async function readIpvsTable(procRoot: string, opts: IpvsProcOptions = {}): Promise<IpvsTableRead> {
  const path = `${procRoot}/net/ip_vs`;
  const parser = new IpvsProcParser(opts);
  const r = await readLines(path, (line) => parser.push(line), MAX_BYTES);
  if (!r.ok) return r.missing ? { ok: true, available: false } : { ok: false, error: r.error };
  const p = parser.finish();
  if (!p.ok) return { ok: false, error: { kind: "garbage", message: p.error, command: path } };
  return { ok: true, available: true, table: p.value };
}
