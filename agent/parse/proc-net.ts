import { endianness } from "node:os";
import { canonicalIp, formatIPv6 } from "./ip-text.js";
import { excerpt, parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

// The kernel prints each 32-bit word of the address as a host-order number (%08X of the __be32), so
// the byte order of the digits is the node's: little-endian on x86-64 and arm64, network order on s390x.
function wordBytes(hex8: string, littleEndian: boolean): number[] {
  const n = parseInt(hex8, 16);
  const b = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  return littleEndian ? b.reverse() : b;
}

/**
 * A /proc/net/tcp{,6} local_address ("0100007F", 32 hex digits for tcp6) in the text iproute2 and
 * ipvsadm print (agent/parse/ip-text.ts), so it compares equal to `ip -j addr` and a URL's address.
 */
export function procAddress(hex: string, littleEndian = endianness() === "LE"): string | null {
  if (/^[0-9A-Fa-f]{8}$/.test(hex)) return wordBytes(hex, littleEndian).join(".");
  if (!/^[0-9A-Fa-f]{32}$/.test(hex)) return null;
  const bytes = [0, 8, 16, 24].flatMap((i) => wordBytes(hex.slice(i, i + 8), littleEndian));
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  return formatIPv6(groups);
}

export interface ListeningSocket {
  family: "inet" | "inet6";
  address: string;
  port: number;
  inode: string;
}

/**
 * The LISTEN sockets (state 0A) of /proc/net/tcp or tcp6 (net/ipv4/tcp_ipv4.c get_tcp4_sock: "sl
 * local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode"), a line at a
 * time: the table lists every TCP socket, so a busy node's is tens of MB, streamed rather than held.
 * Any other line but the header is an error: a socket table we cannot read is not an empty one.
 */
export class ProcNetTcpParser {
  private lineNo = 0;
  private error: string | null = null;
  private readonly out: ListeningSocket[] = [];

  constructor(
    private readonly family: "inet" | "inet6",
    private readonly littleEndian = endianness() === "LE",
  ) {}

  push(line: string): void {
    if (this.error !== null) return;
    if (this.lineNo++ === 0) {
      if (!/^\s*sl\s+local_address/.test(line)) this.error = `no /proc/net/tcp header: ${excerpt(line)}`;
      return;
    }
    if (line.trim() === "") return;
    const c = line.trim().split(/\s+/);
    const [addr, port] = (c[1] ?? "").split(":");
    const address = addr === undefined ? null : procAddress(addr, this.littleEndian);
    if (c.length < 10 || address === null || !/^[0-9A-F]{4}$/i.test(port ?? "") || !/^\d+$/.test(c[9]!)) {
      this.error = `not a /proc/net/tcp socket line: ${excerpt(line)}`;
      return;
    }
    if (c[3] !== "0A") return;
    this.out.push({ family: this.family, address, port: parseInt(port!, 16), inode: c[9]! });
  }

  finish(): Result<ListeningSocket[]> {
    if (this.error !== null) return unparsable(this.error);
    if (this.lineNo === 0) return unparsable("no /proc/net/tcp header: an empty file");
    return parsed(this.out);
  }
}

/** A whole /proc/net/tcp or tcp6 text (tests; the reader streams it through ProcNetTcpParser). */
export function parseProcNetTcp(
  text: string,
  family: "inet" | "inet6",
  littleEndian = endianness() === "LE",
): Result<ListeningSocket[]> {
  const p = new ProcNetTcpParser(family, littleEndian);
  for (const line of text.split("\n")) p.push(line);
  return p.finish();
}

/** One /proc/net/nf_conntrack entry's original direction; `dport` null for ICMP and other portless ones. */
export interface ConntrackFlow {
  proto: string;
  src: string;
  dst: string;
  dport: number | null;
}

/**
 * The original direction of one /proc/net/nf_conntrack entry (nf_conntrack_standalone.c ct_seq_show: the
 * first src=/dst= and the ports before the reply's src=). ICMP's "type=8 code=0 id=…" carry no port; an
 * error for a line that is not an entry, so a table we cannot read is never "no connection".
 */
export function parseConntrackFlow(line: string): Result<ConntrackFlow> {
  const entry = /^ipv[46]\s+\d+\s+(\S+)\s+\d+\s/.exec(line);
  if (!entry) return unparsable(`not a conntrack entry: ${excerpt(line)}`);
  const first = line.indexOf(" src=");
  const reply = line.indexOf(" src=", first + 1);
  const original = line.slice(first, reply < 0 ? undefined : reply);
  const m = /^ src=(\S+) dst=(\S+)(?:.*?\bdport=(\d+))?/.exec(original);
  const src = m ? canonicalIp(m[1]!) : null;
  const dst = m ? canonicalIp(m[2]!) : null;
  if (!m || src === null || dst === null) return unparsable(`no original src=/dst= in: ${excerpt(line)}`);
  return parsed({ proto: entry[1]!, src, dst, dport: m[3] === undefined ? null : Number(m[3]) });
}
