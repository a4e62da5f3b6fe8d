import { isIPv4, isIPv6 } from "node:net";
import { excerpt, parsed, unparsable, type Parsed } from "./result.js";

/** An IPv6 address in its canonical text form (RFC 5952: lower case, longest zero run as "::"). */
export function canonicalIPv6(groups: readonly number[]): string {
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(":");
  return `${hex.slice(0, best).join(":")}::${hex.slice(best + bestLen).join(":")}`;
}

/** Any address as the addresses probe writes it: IPv4 dotted, IPv6 canonical; null if it is neither. */
export function canonicalIp(text: string): string | null {
  if (isIPv4(text)) return text;
  if (!isIPv6(text) || text.includes(".")) return isIPv6(text) ? text.toLowerCase() : null;
  const [head, tail] = text.split("::") as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(":").map((g) => parseInt(g, 16)) : []);
  const a = part(head);
  const b = part(tail);
  const groups = tail === undefined ? a : [...a, ...Array<number>(8 - a.length - b.length).fill(0), ...b];
  return groups.length === 8 ? canonicalIPv6(groups) : null;
}

/** /proc/net/tcp's address: IPv4 as one little-endian 32-bit word, IPv6 as four. */
function procAddress(hex: string): string | null {
  if (/^[0-9A-Fa-f]{8}$/.test(hex)) {
    const n = parseInt(hex, 16);
    return [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, n >>> 24].join(".");
  }
  if (!/^[0-9A-Fa-f]{32}$/.test(hex)) return null;
  const groups: number[] = [];
  for (let w = 0; w < 4; w++) {
    const n = parseInt(hex.slice(w * 8, w * 8 + 8), 16);
    const bytes = [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, n >>> 24];
    groups.push((bytes[0]! << 8) | bytes[1]!, (bytes[2]! << 8) | bytes[3]!);
  }
  return canonicalIPv6(groups);
}

export interface ListeningSocket {
  family: "inet" | "inet6";
  address: string;
  port: number;
  inode: string;
}

/**
 * The LISTEN sockets (state 0A) of /proc/net/tcp or tcp6 (net/ipv4/tcp_ipv4.c get_tcp4_sock: "sl
 * local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode"). Any other
 * line but the header is an error: a socket table we cannot read is not an empty one.
 */
export function parseProcNetTcp(text: string, family: "inet" | "inet6"): Parsed<ListeningSocket[]> {
  const out: ListeningSocket[] = [];
  const lines = text.split("\n");
  if (!/^\s*sl\s+local_address/.test(lines[0] ?? ""))
    return unparsable(`no /proc/net/tcp header: ${excerpt(lines[0] ?? "")}`);
  for (const line of lines.slice(1)) {
    if (line.trim() === "") continue;
    const c = line.trim().split(/\s+/);
    const [addr, port] = (c[1] ?? "").split(":");
    const address = addr === undefined ? null : procAddress(addr);
    if (c.length < 10 || address === null || !/^[0-9A-F]{4}$/i.test(port ?? "") || !/^\d+$/.test(c[9]!))
      return unparsable(`not a /proc/net/tcp socket line: ${excerpt(line)}`);
    if (c[3] !== "0A") continue;
    out.push({ family, address, port: parseInt(port!, 16), inode: c[9]! });
  }
  return parsed(out);
}

export interface ConntrackTuple {
  proto: string;
  dst: string;
  dport: number;
}

/**
 * The original direction's destination of one /proc/net/nf_conntrack entry
 * (net/netfilter/nf_conntrack_standalone.c ct_seq_show: "ipv4 2 tcp 6 117 TIME_WAIT src=… dst=…
 * sport=… dport=… src=… …": the first dst=/dport= are the original direction's). null for an entry with
 * no ports (ICMP) or a line that is not an entry.
 */
export function parseConntrackLine(line: string): ConntrackTuple | null {
  const m = /^ipv[46]\s+\d+\s+(\S+)\s+\d+\s.*?\bdst=(\S+)\s.*?\bdport=(\d+)/.exec(line);
  if (!m) return null;
  const dst = canonicalIp(m[2]!);
  return dst === null ? null : { proto: m[1]!, dst, dport: Number(m[3]) };
}
