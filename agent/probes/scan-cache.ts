import type { KubeProxyMetricsFacts } from "../facts/kube-proxy.js";
import type { SourceFreshness } from "../facts/freshness.js";
import type { IpvsProcTable } from "../parse/ipvs-proc.js";
import type { NftChain } from "../parse/nft-json.js";

/**
 * What a long-running agent keeps between scans (issue #14: "do not redo work that cannot have
 * changed"): the expensive deep reads, each with the fingerprint it was read under. A read is reused
 * only when its fingerprint is known now, equals the one it was read under, and the last full read is
 * younger than the bounded interval; an unknown fingerprint (kube-proxy's /metrics unread) never
 * counts as unchanged. The one-shot `scan` command has no cache.
 */
export class ScanCache {
  private readonly entries = new Map<string, Entry>();
  /** How many times each fingerprint was seen, with the kube-proxy sync timestamps seen under it. */
  private readonly seen = new Map<string, { key: string; firstSeenS: number; syncs: Set<number> }>();

  constructor(
    readonly fullReadIntervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  clock(): number {
    return this.now();
  }

  /**
   * The cached read of `source`, or why it must be read again. `fp` is this scan's fingerprint;
   * `settleSyncs` how many completed kube-proxy syncs (distinct last-sync timestamps after the
   * fingerprint was first seen) make a read under it trustworthy.
   */
  lookup<T>(
    source: string,
    fp: Fingerprint,
    settleSyncs: number,
  ): { hit: true; value: T; readAtMs: number } | { hit: false; why: string } {
    const e = this.entries.get(source);
    const seen = this.observe(source, fp);
    if (!fp.known) return { hit: false, why: `fingerprint unknown: ${fp.why}` };
    if (e === undefined) return { hit: false, why: "first read" };
    if (this.now() - e.fullReadAtMs >= this.fullReadIntervalMs)
      return { hit: false, why: "full-read interval reached" };
    if (e.key !== fp.key) return { hit: false, why: "fingerprint changed" };
    // kube-proxy has not finished a sync since this was read: nothing it does can have changed it.
    if (fp.lastSyncS !== null && fp.lastSyncS * 1000 < e.readStartedMs) {
      return { hit: true, value: e.value as T, readAtMs: e.fullReadAtMs };
    }
    // Otherwise the read must have come after kube-proxy settled: a change is consumed by the next
    // sync, and the chains it left stale are deleted one sync later (proxier.go staleChains).
    if (e.settled) return { hit: true, value: e.value as T, readAtMs: e.fullReadAtMs };
    return {
      hit: false,
      why: `kube-proxy synced ${seen?.syncs.size ?? 0} of ${settleSyncs} times since the fingerprint last changed`,
    };
  }

  /** Records a full read taken under `fp`, started at `readStartedMs`. */
  store(source: string, fp: Fingerprint, value: unknown, readStartedMs: number, settleSyncs: number): void {
    if (!fp.known) {
      this.entries.delete(source);
      return;
    }
    const seen = this.seen.get(source);
    const settled = seen !== undefined && seen.key === fp.key && seen.syncs.size >= settleSyncs;
    this.entries.set(source, { key: fp.key, value, readStartedMs, fullReadAtMs: this.now(), settled });
  }

  private observe(source: string, fp: Fingerprint) {
    if (!fp.known) {
      this.seen.delete(source);
      return undefined;
    }
    let s = this.seen.get(source);
    if (s === undefined || s.key !== fp.key) {
      s = { key: fp.key, firstSeenS: this.now() / 1000, syncs: new Set() };
      this.seen.set(source, s);
    }
    if (fp.lastSyncS !== null && fp.lastSyncS > s.firstSeenS) s.syncs.add(fp.lastSyncS);
    return s;
  }
}

interface Entry {
  key: string;
  value: unknown;
  readStartedMs: number;
  fullReadAtMs: number;
  settled: boolean;
}

export type Fingerprint =
  { known: true; key: string; lastSyncS: number | null } | { known: false; why: string };

// kube-proxy's own counters (pkg/proxy/metrics/metrics.go): every Service and EndpointSlice change it
// sees, the syncs that failed in each mode (nftables mode deletes stale chains in a transaction of its
// own, so a failed main transaction or cleanup leaves chains a later success changes), and what it has
// seen but not yet synced.
const CHANGES = [
  "kubeproxy_sync_proxy_rules_service_changes_total",
  "kubeproxy_sync_proxy_rules_endpoint_changes_total",
] as const;
const FAILURES = [
  "kubeproxy_sync_proxy_rules_nftables_sync_failures_total",
  "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total",
  "kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
] as const;
const PENDING = [
  "kubeproxy_sync_proxy_rules_service_changes_pending",
  "kubeproxy_sync_proxy_rules_endpoint_changes_pending",
] as const;
const LAST_SYNC = "kubeproxy_sync_proxy_rules_last_timestamp_seconds";

/**
 * The fingerprint of kube-proxy's nftables chains: its change counters from /metrics plus what the
 * scan reads cheaply anyway (the set and map declarations of every table, the element counts of
 * kube-proxy's named sets). Unknown when /metrics was not read, lacks a counter, or holds changes
 * kube-proxy has not synced yet.
 */
export function chainsFingerprint(
  metrics: KubeProxyMetricsFacts | null,
  cheap: { declarations: readonly string[]; counts: readonly string[] },
): Fingerprint {
  if (metrics === null) return { known: false, why: "kube-proxy's /metrics was not read" };
  const m = metrics.metrics;
  const parts: string[] = [`build=${metrics.gitVersion ?? "?"}`];
  for (const name of CHANGES) {
    const v = m[name]?.value;
    if (v === undefined) return { known: false, why: `kube-proxy's /metrics has no ${name}` };
    parts.push(`${name}=${v}`);
  }
  for (const name of PENDING) {
    const v = m[name]?.value ?? 0;
    if (v !== 0) return { known: false, why: `kube-proxy has ${v} changes not synced yet (${name})` };
  }
  for (const name of FAILURES) parts.push(`${name}=${m[name]?.value ?? "absent"}`);
  parts.push(...[...cheap.declarations].sort(), ...[...cheap.counts].sort());
  const last = m[LAST_SYNC]?.value;
  return { known: true, key: parts.join("\n"), lastSyncS: typeof last === "number" ? last : null };
}

/** What one scan's probes share: listings one reads and another reuses, and how fresh each source is. */
export interface ScanShared {
  freshness: SourceFreshness[];
  /** Every chain of every table, as the nftables probe listed it (or reused it) in this scan. */
  nftChains?: NftChain[];
  /** The raw `nft -j list set|map <family> <table> <name>` answers of this scan, by argv. */
  nftSetAnswers: Map<string, string>;
  /** The raw `ip -j -d addr show` the addresses probe ran: every link, kube-ipvs0 among them. */
  addrListing?: string;
  /** /proc/net/ip_vs as the ipvs probe read it, with every real server (parity's ipvs-mode snapshot). */
  ipvsTable?: IpvsProcTable;
}

export const newScanShared = (): ScanShared => ({ freshness: [], nftSetAnswers: new Map() });
