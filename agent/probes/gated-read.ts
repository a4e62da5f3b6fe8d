import type { SourceFreshness } from "../facts/freshness.js";
import type { ProbeError } from "../facts/probe-error.js";
import { cacheKey, IPVS_GATE, NFT_GATE, type CacheKey } from "./scan-cache.js";
import type { ProbeContext } from "./types.js";

export type Read<T> = { ok: true; value: T } | { ok: false; error: ProbeError };

/**
 * The read of an nf_tables source, or the one an earlier scan took when the ruleset generation has
 * not moved since (ScanCache's rules), recording which in this scan's `sources`. `parts` are what
 * else the read depends on (a table name). Without a cache every call reads.
 */
export async function gatedRead<T>(
  ctx: ProbeContext,
  source: SourceFreshness["source"],
  parts: string[],
  read: () => Promise<Read<T>>,
): Promise<Read<T>> {
  const cache = ctx.cache ?? null;
  const gen = ctx.shared?.generation;
  if (cache === null || gen === undefined) return read();
  return keyedRead(ctx, source, read, {
    gate: NFT_GATE,
    before: async () => cacheKey(await gen.atStart(), ...parts),
    after: async () => cacheKey(await gen.now(), ...parts),
  });
}

/**
 * The read of an ipvs-mode source (the IPVS table, the links' addresses, the ipsets' members), or the
 * one an earlier scan took under the same ipvs-mode gate key (parse/ipvs-gate.ts: kube-proxy said
 * ipvs, synced every change it saw, and the cheap fingerprints stand still). The key is taken once,
 * before the scan's reads: its parts only move forward, so a change during a read shows next scan.
 */
export async function ipvsGatedRead<T>(
  ctx: ProbeContext,
  source: SourceFreshness["source"],
  read: () => Promise<Read<T>>,
): Promise<Read<T>> {
  const cache = ctx.cache ?? null;
  const gate = ctx.shared?.ipvsGate;
  if (cache === null || gate === undefined) return read();
  return keyedRead(ctx, source, read, { gate: IPVS_GATE, before: gate, after: gate });
}

async function keyedRead<T>(
  ctx: ProbeContext,
  source: SourceFreshness["source"],
  read: () => Promise<Read<T>>,
  how: { gate: typeof NFT_GATE; before: () => Promise<CacheKey>; after: () => Promise<CacheKey> },
): Promise<Read<T>> {
  const cache = ctx.cache!;
  const before = await how.before();
  const hit = cache.lookup<T>(source, before, how.gate);
  if (hit.hit) {
    ctx.shared?.freshness.push({
      source,
      readAt: new Date(hit.readAtMs).toISOString(),
      ageSeconds: 0,
      reused: true,
      why: how.gate.reused,
    });
    return { ok: true, value: hit.value };
  }
  const started = cache.clock();
  const r = await read();
  if (!r.ok) return r;
  const after = await how.after();
  const kept = cache.store(source, before, after, r.value, started);
  ctx.shared?.freshness.push({
    source,
    readAt: new Date(started).toISOString(),
    ageSeconds: 0,
    reused: false,
    why: kept || !before.known ? hit.why : `${hit.why}; not kept: ${how.gate.changed} while it was read`,
  });
  return r;
}
