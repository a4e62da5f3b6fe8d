import { isIP } from "node:net";
import { endianness } from "node:os";

/** A TCP socket in LISTEN state, from /proc/net/tcp or tcp6. */
export interface ProcListener {
  family: "inet" | "inet6";
  /** Canonical text ("127.0.0.1", "::", "::ffff:7f00:1"): the form canonicalIp gives. */
  address: string;
  port: number;
  inode: string;
}

/** An IP literal in one spelling (WHATWG URL's), so two spellings of one address compare equal; null if not an IP. */
export function canonicalIp(text: string): string | null {
  const bare = text.replace(/^\[(.*)\]$/, "$1");
  const family = isIP(bare);
  if (family === 0) return null;
  try {
    return new URL(`http://${family === 6 ? `[${bare}]` : bare}/`).hostname.replace(/^\[(.*)\]$/, "$1");
  } catch {
    return null;
  }
}

// The kernel prints each 32-bit word of the address as a host-order number (%08X).
function wordBytes(hex8: string, littleEndian: boolean): number[] {
  const b = [0, 2, 4, 6].map((i) => parseInt(hex8.slice(i, i + 2), 16));
  return littleEndian ? b.reverse() : b;
}

/** The address part of a /proc/net/tcp{,6} local_address ("0100007F", 32 hex digits for tcp6). */
export function decodeProcAddress(hex: string, littleEndian = endianness() === "LE"): string | null {
  if (!/^[0-9A-Fa-f]+$/.test(hex)) return null;
  if (hex.length === 8) return wordBytes(hex, littleEndian).join(".");
  if (hex.length !== 32) return null;
  const bytes = [0, 8, 16, 24].flatMap((i) => wordBytes(hex.slice(i, i + 8), littleEndian));
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return canonicalIp(groups.join(":"));
}

/** LISTEN sockets (state 0A) in one /proc/net/tcp or tcp6 text. */
export function parseProcNetTcp(text: string, family: ProcListener["family"]): ProcListener[] {
  const out: ProcListener[] = [];
  for (const line of text.split("\n").slice(1)) {
    const c = line.trim().split(/\s+/);
    if (c.length < 10 || c[3] !== "0A" || c[9] === "0") continue;
    const [hexAddr, hexPort] = (c[1] ?? "").split(":");
    const address = decodeProcAddress(hexAddr ?? "");
    const port = parseInt(hexPort ?? "", 16);
    if (address === null || !Number.isInteger(port)) continue;
    out.push({ family, address, port, inode: c[9]! });
  }
  return out;
}

const WILDCARD = new Set(["0.0.0.0", "::"]);
export const isWildcard = (l: ProcListener): boolean => WILDCARD.has(l.address);

/**
 * Whether a connection to `host` (canonical) may land on this listener: bound to that very address
 * (also as an IPv4-mapped IPv6 address), or to the wildcard of a family that reaches it. An IPv6
 * wildcard counts for IPv4 too: /proc does not show IPV6_V6ONLY, and counting it only refuses more.
 */
export function covers(l: ProcListener, host: string): boolean {
  const mapped = /^::ffff:(.+)$/.exec(host)?.[1];
  const v4 = isIP(host) === 4 ? host : mapped !== undefined ? canonicalIp(ipv4OfMapped(mapped)) : null;
  const same = new Set([host]);
  if (v4 !== null) {
    same.add(v4);
    const m = canonicalIp(`::ffff:${v4}`);
    if (m !== null) same.add(m);
  }
  if (same.has(l.address)) return true;
  if (l.address === "::") return true;
  return l.address === "0.0.0.0" && v4 !== null;
}

// URL writes ::ffff:127.0.0.1 as ::ffff:7f00:1.
function ipv4OfMapped(tail: string): string {
  const m = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(tail);
  if (!m) return tail;
  const hi = parseInt(m[1]!, 16);
  const lo = parseInt(m[2]!, 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
}

/** host:port as one types it in a URL ("[::1]:10249"). */
export const hostPort = (address: string, port: number): string =>
  isIP(address) === 6 ? `[${address}]:${port}` : `${address}:${port}`;
