import type { IpvsProcTable } from "../parse/ipvs-proc.js";
import type { ScanShared } from "./scan-cache.js";

// Reads one probe makes and another reuses within the same scan (issue #14: never the same read twice).
// Kept beside ScanShared, keyed by it, so they live exactly as long as one scan.
interface Reads {
  /** The raw `ip -j -d addr show` the addresses probe ran: every link, kube-ipvs0 among them. */
  addrListing?: string;
  /** /proc/net/ip_vs as the ipvs probe read it, with every real server (parity's ipvs-mode snapshot). */
  ipvsTable?: IpvsProcTable;
}

const perScan = new WeakMap<ScanShared, Reads>();

function reads(shared: ScanShared): Reads {
  let r = perScan.get(shared);
  if (r === undefined) perScan.set(shared, (r = {}));
  return r;
}

export function shareAddrListing(shared: ScanShared | undefined, stdout: string): void {
  if (shared !== undefined) reads(shared).addrListing = stdout;
}

export const sharedAddrListing = (shared: ScanShared | undefined): string | undefined =>
  shared === undefined ? undefined : perScan.get(shared)?.addrListing;

export function shareIpvsTable(shared: ScanShared | undefined, table: IpvsProcTable): void {
  if (shared !== undefined) reads(shared).ipvsTable = table;
}

export const sharedIpvsTable = (shared: ScanShared | undefined): IpvsProcTable | undefined =>
  shared === undefined ? undefined : perScan.get(shared)?.ipvsTable;
