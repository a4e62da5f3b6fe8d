import { isIP } from "node:net";
import { canonicalIp as ipText } from "./ip-text.js";
import type { ListeningSocket } from "./proc-net.js";

// Which LISTEN socket (agent/io/proc-sockets.ts) a connection to an address may land on. Addresses
// are compared in the one text form agent/parse/ip-text.ts writes ("::ffff:127.0.0.1" for a mapped one).

/**
 * An IP literal as a URL host names it ("[::1]", "127.1", "0x7f.0.0.1") in the one canonical text, so
 * two spellings of one address compare equal; null if it is not an IP (a name).
 */
export function canonicalIp(text: string): string | null {
  let host: string;
  try {
    // WHATWG URL's host parser is the one an HTTP client applies to the same text.
    host = new URL(`http://${isIP(text) === 6 ? `[${text}]` : text}/`).hostname.replace(/^\[(.*)\]$/, "$1");
  } catch {
    return null;
  }
  return isIP(host) === 0 ? null : ipText(host);
}

const WILDCARD = new Set(["0.0.0.0", "::"]);
export const isWildcard = (l: ListeningSocket): boolean => WILDCARD.has(l.address);

/**
 * Whether a connection to `host` (canonical) may land on this listener: bound to that very address
 * (also as an IPv4-mapped IPv6 address), or to the wildcard of a family that reaches it. An IPv6
 * wildcard counts for IPv4 too: /proc does not show IPV6_V6ONLY, and counting it only refuses more.
 */
export function covers(l: ListeningSocket, host: string): boolean {
  const v4 = isIP(host) === 4 ? host : (/^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host)?.[1] ?? null);
  if (l.address === host || l.address === "::") return true;
  if (v4 === null) return false;
  return l.address === v4 || l.address === `::ffff:${v4}` || l.address === "0.0.0.0";
}

/** host:port as one types it in a URL ("[::1]:10249"). */
export const hostPort = (address: string, port: number): string =>
  isIP(address) === 6 ? `[${address}]:${port}` : `${address}:${port}`;
