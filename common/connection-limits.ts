import type { Server } from "node:http";
import { isIP, type Socket } from "node:net";
import { readRegularFileSync } from "./regular-file.js";

/**
 * How many connections an HTTP server of ours (the agent's, the collector's `serve`) holds at once,
 * and for how long. Without a cap anyone who reaches the port could hold slow connections up to the
 * file descriptor limit, and the agent's next scan then failed to open files and spawn tools.
 * Node has no getrlimit: the soft limit comes from /proc/self/limits.
 */
export interface ConnectionLimits {
  maxConnections: number;
  /**
   * Connections one source holds at once (an IPv4 address, an IPv6 /64): past it, its new ones are
   * closed at once. One host on the node network can then take only a share of the cap, and the
   * kubelet's probes (from the node's own address) and Prometheus (from its own) still get in.
   */
  maxPerSource: number;
  /** Whole request headers must arrive within this (a trickle of bytes does not extend it). */
  headersTimeoutMs: number;
  /** Whole request, headers and body. */
  requestTimeoutMs: number;
  /** A socket with no traffic at all is closed after this. */
  idleTimeoutMs: number;
  /** An idle keep-alive connection between requests. */
  keepAliveTimeoutMs: number;
  /** How often Node checks headers/request deadlines (its default, 30 s, would let them run 30 s late). */
  checkIntervalMs: number;
  /**
   * With TLS, the handshake must finish within this (Node's default is 120 s, and the header deadline
   * starts only after it): a connection that never sends a ClientHello is closed as a slow header is.
   */
  handshakeTimeoutMs: number;
}

// Scrapers, the collector and the kubelet's probes need a handful; 128 is far more than they use.
const MAX_CONNECTIONS = 128;
// At least three quarters of the descriptors stay for probes (each tool run takes pipes, each read a file).
const SHARE_OF_FD_LIMIT = 4;
const MIN_CONNECTIONS = 8;
// A quarter of the cap a source: it takes at least four hosts (or /64s) to fill it, and scrapers and
// the kubelet use a handful each.
const SHARE_PER_SOURCE = 4;
const MIN_PER_SOURCE = 2;

// /proc/self/limits is about 1.4 KB; far more is not that file.
const MAX_LIMITS_FILE_BYTES = 64 * 1024;

/**
 * The soft RLIMIT_NOFILE of this process (null: unlimited or not said), or why the file was not read:
 * the file and the reader's refusal (too-big, not-regular, missing, ...).
 */
export function readSoftFdLimit(
  limitsFile = "/proc/self/limits",
): { ok: true; limit: number | null } | { ok: false; error: string } {
  const r = readRegularFileSync(limitsFile, MAX_LIMITS_FILE_BYTES);
  if (!r.ok) return { ok: false, error: `${limitsFile}: ${r.reason}: ${r.error}` };
  const line = r.text.split("\n").find((l) => l.startsWith("Max open files"));
  const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
  if (soft === "unlimited") return { ok: true, limit: null };
  const n = Number(soft);
  return { ok: true, limit: Number.isSafeInteger(n) && n > 0 ? n : null };
}

/** The soft RLIMIT_NOFILE of this process, or null when /proc does not say (then the fixed cap). */
export function softFdLimit(limitsFile = "/proc/self/limits"): number | null {
  const r = readSoftFdLimit(limitsFile);
  return r.ok ? r.limit : null;
}

export function connectionLimits(softLimit: number | null = softFdLimit()): ConnectionLimits {
  const byFds = softLimit === null ? MAX_CONNECTIONS : Math.floor(softLimit / SHARE_OF_FD_LIMIT);
  const maxConnections = Math.max(MIN_CONNECTIONS, Math.min(MAX_CONNECTIONS, byFds));
  return {
    maxConnections,
    maxPerSource: Math.max(MIN_PER_SOURCE, Math.floor(maxConnections / SHARE_PER_SOURCE)),
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    idleTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5_000,
    checkIntervalMs: 2_000,
    handshakeTimeoutMs: 10_000,
  };
}

/** Fastify's own options for the limits (passed at creation: Node reads some only then). */
export function fastifyLimitOptions(l: ConnectionLimits) {
  return {
    connectionTimeout: l.idleTimeoutMs,
    keepAliveTimeout: l.keepAliveTimeoutMs,
    requestTimeout: l.requestTimeoutMs,
    http: {
      headersTimeout: l.headersTimeoutMs,
      requestTimeout: l.requestTimeoutMs,
      keepAliveTimeout: l.keepAliveTimeoutMs,
      connectionsCheckingInterval: l.checkIntervalMs,
    },
  };
}

/** The IPv4 address inside an IPv4-mapped one (how a dual-stack listener names IPv4 peers), else as is. */
export function unmapIPv4(address: string): string {
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** Whose share a connection counts against: the IPv4 address, or the /64 of an IPv6 one. */
export function sourceOf(address: string | undefined): string {
  if (address === undefined) return "";
  const a = unmapIPv4(address);
  if (isIP(a) !== 6) return a;
  // One host is handed a whole /64 (SLAAC, a pod's range): its addresses are one source.
  const [head = "", tail = ""] = a.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = a.includes("::") ? (tail === "" ? [] : tail.split(":")) : [];
  const groups = a.includes("::")
    ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, "").toLowerCase())
    .join(":")}::/64`;
}

/**
 * The cap itself lives on the server: past it Node closes each new connection at once. The share
 * per source is counted here, on every TCP connection (before TLS: a handshake never finished holds a
 * descriptor too).
 */
export function capConnections(server: Server, l: ConnectionLimits): void {
  server.maxConnections = l.maxConnections;
  server.headersTimeout = l.headersTimeoutMs;
  const held = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const source = sourceOf(socket.remoteAddress);
    const n = held.get(source) ?? 0;
    if (n >= l.maxPerSource) {
      socket.destroy();
      return;
    }
    held.set(source, n + 1);
    socket.once("close", () => {
      const left = (held.get(source) ?? 1) - 1;
      if (left <= 0) held.delete(source);
      else held.set(source, left);
    });
  });
}
