import { readFileSync } from "node:fs";
import type { Server } from "node:http";

/**
 * How many connections an HTTP server of ours (the agent's, the collector's `serve`) holds at once,
 * and for how long. Without a cap anyone who reaches the port could hold slow connections up to the
 * file descriptor limit, and the agent's next scan then failed to open files and spawn tools
 * (issue #13.2). Node has no getrlimit: the soft limit comes from /proc/self/limits.
 */
export interface ConnectionLimits {
  maxConnections: number;
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
}

// Scrapers, the collector and the kubelet's probes need a handful; 128 is far more than they use.
const MAX_CONNECTIONS = 128;
// At least three quarters of the descriptors stay for probes (each tool run takes pipes, each read a file).
const SHARE_OF_FD_LIMIT = 4;
const MIN_CONNECTIONS = 8;

/** The soft RLIMIT_NOFILE of this process, or null when /proc does not say (then the fixed cap). */
export function softFdLimit(limitsFile = "/proc/self/limits"): number | null {
  try {
    const line = readFileSync(limitsFile, "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
    if (soft === "unlimited") return null;
    const n = Number(soft);
    return Number.isSafeInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

export function connectionLimits(softLimit: number | null = softFdLimit()): ConnectionLimits {
  const byFds = softLimit === null ? MAX_CONNECTIONS : Math.floor(softLimit / SHARE_OF_FD_LIMIT);
  return {
    maxConnections: Math.max(MIN_CONNECTIONS, Math.min(MAX_CONNECTIONS, byFds)),
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    idleTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5_000,
    checkIntervalMs: 2_000,
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

/** The cap itself lives on the server: past it Node closes each new connection at once. */
export function capConnections(server: Server, l: ConnectionLimits): void {
  server.maxConnections = l.maxConnections;
  server.headersTimeout = l.headersTimeoutMs;
}
