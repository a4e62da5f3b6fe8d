import type { SourceFreshness } from "../facts/freshness.js";
import type { ProbeError } from "../facts/probe-error.js";
import { cacheKey } from "./scan-cache.js";
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
  const before = cacheKey(await gen.atStart(), ...parts);
  const hit = cache.lookup<T>(source, before);
  if (hit.hit) {
    ctx.shared?.freshness.push({
      source,
      readAt: new Date(hit.readAtMs).toISOString(),
      ageSeconds: 0,
      reused: true,
      why: "the nf_tables generation has not moved since it was read",
    });
    return { ok: true, value: hit.value };
  }
  const started = cache.clock();
  const r = await read();
  if (!r.ok) return r;
  const after = cacheKey(await gen.now(), ...parts);
  const kept = cache.store(source, before, after, r.value, started);
  ctx.shared?.freshness.push({
    source,
    readAt: new Date(started).toISOString(),
    ageSeconds: 0,
    reused: false,
    why: kept || !before.known ? hit.why : `${hit.why}; not kept: nf_tables changed while it was read`,
  });
  return r;
}
