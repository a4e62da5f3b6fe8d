import type { ConntrackPass } from "../io/conntrack-flows.js";
import type { SourceFreshness } from "../facts/freshness.js";
import type { GenerationRead } from "../io/nft-generation.js";
import type { KubeIpvs0Facts } from "../facts/ipvs.js";
import type { GateKey } from "../parse/ipvs-gate.js";
import type { IpvsProcTable } from "../parse/ipvs-proc.js";
import type { NftChainServed } from "../parse/nft-services.js";
import type { HttpResult } from "../../common/http.js";
import type { Result } from "../../common/result.js";

/**
 * What a long-running agent keeps between scans ("do not redo work that cannot have
 * changed"): the nf_tables reads, each under the ruleset generation id it was read at. The kernel
 * bumps that id on every committed nf_tables transaction — kube-proxy's, iptables-nft's, anyone's —
 * and never on a read or a packet, so a read is reused only when the id now equals the one the read
 * started and ended under, and the last full read is younger than the bounded interval (packet
 * counters in a reused read are as old as the read: the report's `sources` says when it was taken).
 * An unknown id never counts as unchanged. The ipvs-mode reads are kept the same way under the
 * ipvs-mode gate's key (parse/ipvs-gate.ts), and /proc/net/ip_vs_conn under a clock alone
 * (lookupYoungerThan). The one-shot `scan` command has no cache.
 */
export class ScanCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    readonly fullReadIntervalMs: number,
    private readonly now: () => number = Date.now,
    /** At most this long between two reads of /proc/net/ip_vs_conn; 0: every scan. */
    readonly ipvsConnIntervalMs = 0,
  ) {}

  clock(): number {
    return this.now();
  }

  /** The cached read of `source` taken under `key`, or why it must be read again. */
  lookup<T>(
    source: string,
    key: CacheKey,
    gate: Gate = NFT_GATE,
  ): { hit: true; value: T; readAtMs: number } | { hit: false; why: string } {
    if (!key.known) return { hit: false, why: `${gate.unknown}: ${key.why}` };
    const e = this.entries.get(source);
    if (e === undefined) return { hit: false, why: "first read" };
    if (this.now() - e.readAtMs >= this.fullReadIntervalMs)
      return { hit: false, why: "full-read interval reached" };
    if (e.key !== key.key)
      return { hit: false, why: `${gate.changed} since the last read (${e.key} -> ${key.key})` };
    return { hit: true, value: e.value as T, readAtMs: e.readAtMs };
  }

  /** A read gated by time alone: the cached one while younger than `maxAgeMs`. */
  lookupYoungerThan<T>(
    source: string,
    maxAgeMs: number,
  ): { hit: true; value: T; readAtMs: number } | { hit: false; why: string } {
    const e = this.entries.get(source);
    if (e === undefined) return { hit: false, why: "first read" };
    if (this.now() - e.readAtMs >= maxAgeMs) return { hit: false, why: "its read interval reached" };
    return { hit: true, value: e.value as T, readAtMs: e.readAtMs };
  }

  /** Keeps a read gated by time alone (lookupYoungerThan). */
  storeRead(source: string, value: unknown, readStartedMs: number): void {
    this.entries.set(source, { key: "", value, readAtMs: readStartedMs });
  }

  /**
   * Keeps a read that started under `before` and whose generation was read again, `after`, once it
   * ended: only when both are known and equal did the read see one unchanging ruleset.
   */
  store(source: string, before: CacheKey, after: CacheKey, value: unknown, readStartedMs: number): boolean {
    if (!before.known || !after.known || before.key !== after.key) {
      this.entries.delete(source);
      return false;
    }
    this.entries.set(source, { key: before.key, value, readAtMs: readStartedMs });
    return true;
  }
}

interface Entry {
  key: string;
  value: unknown;
  readAtMs: number;
}

export type CacheKey = GateKey;

/** How a gate's misses and hits are told in the report's `sources`. */
export interface Gate {
  unknown: string;
  changed: string;
  reused: string;
}

/** The nf_tables sources' gate: the kernel's ruleset generation id. */
export const NFT_GATE: Gate = {
  unknown: "nf_tables generation unknown",
  changed: "nf_tables changed",
  reused: "the nf_tables generation has not moved since it was read",
};

/** The ipvs-mode sources' gate: kube-proxy's sync state and cheap fingerprints (parse/ipvs-gate.ts). */
export const IPVS_GATE: Gate = {
  unknown: "ipvs-mode state in doubt",
  changed: "ipvs-mode state changed",
  reused:
    "kube-proxy (ipvs mode) has synced every Service and EndpointSlice change it saw since, and the ipsets' headers and the up links' addresses are unchanged",
};

/** The key of a read: the generation id, plus whatever else the read depended on (a table name). */
export function cacheKey(g: GenerationRead, ...parts: string[]): CacheKey {
  if (!g.ok) return { known: false, why: `${g.error.kind}: ${g.error.message}` };
  return { known: true, key: [`generation ${g.generation}`, ...parts].join(" ") };
}

/** What one scan's probes share: listings one reads and another reuses, and how fresh each source is. */
export interface ScanShared {
  freshness: SourceFreshness[];
  /**
   * The nf_tables generation id when this scan began (read once, by the first probe that asks), and a
   * fresh read of it (after a read, to prove nothing changed during it). Absent: no cache, no reads.
   */
  generation?: { atStart(): Promise<GenerationRead>; now(): Promise<GenerationRead> };
  /** What parity takes from kube-proxy's chains, as the nftables probe read (or reused) them; parity on only. */
  nftChainServed?: NftChainServed;
  /** The raw `nft -j list set|map <family> <table> <name>` answers of this scan, by argv; parity on only. */
  nftSetAnswers: Map<string, string>;
  /** kube-proxy's answers this scan, by cap and URL (kube-proxy-get.ts): one GET for the gate and the probes. */
  kubeProxyAnswers: Map<string, Promise<HttpResult>>;
  /**
   * The ipvs-mode gate's key for this scan, read once (by the first probe that asks); absent: no cache.
   * Read before any ipvs-mode deep read and never after: every part of the key only moves forward
   * (counters, queued times) or is a fingerprint, so a change during a read shows at the next scan.
   */
  ipvsGate?: () => Promise<GateKey>;
  /** `ipset list -terse` as the gate read it in this scan (null: ip_set not in the kernel). */
  ipsetTerse?: string | null;
  /** kube-ipvs0 as the addresses probe's listing of every link (read or reused) showed it. */
  kubeIpvs0?: Result<KubeIpvs0Facts>;
  /** /proc/net/ip_vs as the ipvs probe read it, with every real server (parity's ipvs-mode snapshot). */
  ipvsTable?: IpvsProcTable;
  /** This wave's one read of nf_conntrack, for every probe in it that counts there (`readsConntrack`). */
  conntrack?: ConntrackPass;
}

/**
 * A scan's shared state; with `readGeneration`, the generation is read at most once for `atStart`;
 * with `readIpvsGate`, the ipvs-mode gate's key at most once.
 */
export function newScanShared(
  readGeneration?: () => Promise<GenerationRead>,
  readIpvsGate?: (shared: ScanShared) => Promise<GateKey>,
): ScanShared {
  const shared: ScanShared = { freshness: [], nftSetAnswers: new Map(), kubeProxyAnswers: new Map() };
  if (readGeneration !== undefined) {
    let first: Promise<GenerationRead> | null = null;
    shared.generation = { atStart: () => (first ??= readGeneration()), now: readGeneration };
  }
  if (readIpvsGate !== undefined) {
    let key: Promise<GateKey> | null = null;
    shared.ipvsGate = () => (key ??= readIpvsGate(shared));
  }
  return shared;
}
