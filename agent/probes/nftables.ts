import type { ConfigzFacts, KubeProxyMetricsFacts } from "../facts/kube-proxy.js";
import type { ProbeError } from "../facts/probe-error.js";
import type { ExecResult } from "../io/run.js";
import {
  parseNftChains,
  parseNftSetNames,
  parseNftSets,
  type NftSet,
  type NftSetName,
  type NftTable,
} from "../parse/nft-json.js";
import { nftablesFacts, setsToCount, summarizeChains } from "../parse/nftables-facts.js";
import type { Parsed } from "../parse/result.js";
import type { SourceFreshness } from "../facts/freshness.js";
import { chainsFingerprint, type Fingerprint } from "./scan-cache.js";
import { defineProbe, type ProbeContext } from "./types.js";

// What each read costs at 10,000 Services x 10 endpoints on nft 1.0.6 (Debian 12), measured by
// bench/nft-calls.ts (bench/results/nft-calls-10000.md): `list chains` ~3 s of CPU, the only way short of
// a whole-ruleset cache to learn every table and base chain on 1.0.6; `-t list sets|maps` ~0.1 s (names,
// no elements); `list set|map <one>` 0.03-0.5 s. Never `list sets|maps <family>` (8-14 s: 1.0.6 fetches
// the elements of all ~10,000 anonymous vmaps to print the named ones), `list table`, `list tables` or
// `list chain <one>` (each builds the full cache on 1.0.6, 28-60 s).
const MAX_BYTES = 128 * 1024 * 1024;
const DEFAULT_TABLE = "kube-proxy";
// What nft prints when the kernel has no nf_tables at all (nfnetlink answers EPROTONOSUPPORT, or
// EOPNOTSUPP from some builds); reported as such rather than as a bare exit status.
const NO_NF_TABLES = /protocol not supported|operation not supported/i;

function tableName(ctx: ProbeContext): string {
  const prior = ctx.prior["kube-proxy-configz"];
  if (prior?.ok) {
    const name = (prior.facts as ConfigzFacts).nftablesTableName;
    if (typeof name === "string" && name !== "") return name;
  }
  return DEFAULT_TABLE;
}

async function nft(ctx: ProbeContext, args: string[]): Promise<ExecResult> {
  const r = await ctx.tools.run("nft", args, { timeoutMs: ctx.callTimeoutMs, maxBytes: MAX_BYTES });
  if (!r.ok && r.error.kind === "exit-status" && NO_NF_TABLES.test(r.error.message)) {
    return {
      ok: false,
      error: { ...r.error, message: `kernel without nf_tables (nft: ${r.error.message})` },
    };
  }
  return r;
}

/** One nft read, parsed; a failed call or an unparsable answer is a named failure, never "nothing". */
async function listed<T>(
  ctx: ProbeContext,
  args: string[],
  parse: (text: string) => Parsed<T>,
  keep?: (text: string) => void,
): Promise<{ ok: true; value: T } | { ok: false; error: ProbeError }> {
  const r = await nft(ctx, args);
  if (!r.ok) return r;
  const p = parse(r.stdout);
  if (p.ok) keep?.(r.stdout);
  return p.ok
    ? p
    : { ok: false, error: { kind: "garbage", message: p.error, command: `nft ${args.join(" ")}` } };
}

/** Every (family, table) that holds a chain, set or map, in first-seen order. */
export function tablesOf(objects: readonly { family: NftTable["family"]; table: string }[]): NftTable[] {
  const seen = new Map<string, NftTable>();
  for (const o of objects) {
    const k = `${o.family} ${o.table}`;
    if (!seen.has(k)) seen.set(k, { family: o.family, name: o.table });
  }
  return [...seen.values()];
}

// A change kube-proxy sees is consumed by its next sync, and the chains that sync leaves stale are
// deleted by the one after (pkg/proxy/nftables/proxier.go staleChains): a listing taken after three
// syncs under one fingerprint holds every chain that fingerprint stands for. Per family, since the
// IPv4 and IPv6 proxiers sync on their own and share the timestamp.
const SETTLE_SYNCS_PER_FAMILY = 3;
const CHAINS = ["-j", "list", "chains"];
// kube-proxy's dearest map to list (~0.5 s of CPU at 10,000 Services on nft 1.0.6, which prints every
// element with any listing of it): one element per Service port, written by kube-proxy in the same
// sync transaction as the chains, from the same Services and EndpointSlices its change counters count
// (syncProxyRules: serviceIPsMap elements beside the service chains). Gated with the chain listing.
const GATED_MAPS = new Set(["service-ips"]);

type Read<T> = { ok: true; value: T } | { ok: false; error: ProbeError };

interface Gate {
  fp: Fingerprint;
  settle: number;
}

/**
 * The read of `source`, or the answer of an earlier scan when kube-proxy's counters and the cheap
 * reads say nothing changed since (ScanCache's rules), recording which in this scan's sources.
 */
async function gated<T>(
  ctx: ProbeContext,
  source: SourceFreshness["source"],
  gate: Gate,
  read: () => Promise<Read<T>>,
): Promise<Read<T>> {
  const cache = ctx.cache ?? null;
  if (cache === null) return read();
  const hit = cache.lookup<T>(source, gate.fp, gate.settle);
  if (hit.hit) {
    ctx.shared?.freshness.push({
      source,
      readAt: new Date(hit.readAtMs).toISOString(),
      ageSeconds: 0,
      reused: true,
      why: "kube-proxy's change counters and kube-proxy's other named sets unchanged since it was read",
    });
    return { ok: true, value: hit.value };
  }
  const started = cache.clock();
  const r = await read();
  if (!r.ok) return r;
  cache.store(source, gate.fp, r.value, started, gate.settle);
  ctx.shared?.freshness.push({
    source,
    readAt: new Date(started).toISOString(),
    ageSeconds: 0,
    reused: false,
    why: hit.why,
  });
  return r;
}

/** One set or map's elements, keeping nft's answer for parity to reuse in this scan. */
async function listedSet(ctx: ProbeContext, s: NftSetName): Promise<Read<{ sets: NftSet[]; text: string }>> {
  const args = ["-j", "list", s.kind, s.family, s.table, s.name];
  let text = "";
  const r = await listed(ctx, args, parseNftSets, (t) => (text = t));
  return r.ok ? { ok: true, value: { sets: r.value, text } } : r;
}

const setArgv = (s: NftSetName) => ["-j", "list", s.kind, s.family, s.table, s.name].join(" ");

export const nftablesProbe = defineProbe("nftables", {
  needs: ["kube-proxy-configz", "kube-proxy-metrics"],
  async run(ctx) {
    const name = tableName(ctx);
    const declared: NftSetName[] = [];
    for (const what of ["sets", "maps"]) {
      const r = await listed(ctx, ["-j", "-t", "list", what], parseNftSetNames);
      if (!r.ok) return r;
      declared.push(...r.value);
    }
    // Elements only where a count is a fact, one set or map per call: any of them unread fails the
    // probe, so a count is never a zero that stands for "not read".
    const toCount = setsToCount(declared, name);
    const byArgv = new Map<string, NftSet[]>();
    for (const s of toCount.filter((s) => !GATED_MAPS.has(s.name))) {
      const r = await listedSet(ctx, s);
      if (!r.ok) return r;
      ctx.shared?.nftSetAnswers.set(setArgv(s), r.value.text);
      byArgv.set(setArgv(s), r.value.sets);
    }
    const cheapCounts = [...byArgv.values()].flat();
    // The fingerprint is taken from what was read above, never from a gated read's own answer.
    const metrics = ctx.prior["kube-proxy-metrics"];
    const gate: Gate = {
      fp: chainsFingerprint(metrics?.ok ? (metrics.facts as KubeProxyMetricsFacts) : null, {
        declarations: declared.map((d) => `${d.kind} ${d.family} ${d.table} ${d.name} ${d.type}`),
        counts: cheapCounts.map((s) => `${s.family} ${s.table} ${s.name} ${s.elements}`),
      }),
      settle:
        SETTLE_SYNCS_PER_FAMILY *
        Math.max(1, new Set(declared.filter((d) => d.table === name).map((d) => d.family)).size),
    };
    const big = toCount.filter((s) => GATED_MAPS.has(s.name));
    if (big.length > 0) {
      const r = await gated(ctx, "nft-service-ips", gate, async () => {
        const out: { argv: string; sets: NftSet[]; text: string }[] = [];
        for (const s of big) {
          const one = await listedSet(ctx, s);
          if (!one.ok) return one;
          out.push({ argv: setArgv(s), ...one.value });
        }
        return { ok: true as const, value: out };
      });
      if (!r.ok) return r;
      for (const one of r.value) {
        ctx.shared?.nftSetAnswers.set(one.argv, one.text);
        byArgv.set(one.argv, one.sets);
      }
    }
    const sets = toCount.flatMap((s) => byArgv.get(setArgv(s)) ?? []);
    const chains = await gated(ctx, "nft-chains", gate, () => listed(ctx, CHAINS, parseNftChains));
    if (!chains.ok) return chains;
    if (ctx.shared) ctx.shared.nftChains = chains.value;
    const tables = tablesOf([
      ...summarizeChains(chains.value).tables.map((t) => ({ family: t.family, table: t.name })),
      ...declared,
    ]);
    return { ok: true, facts: nftablesFacts({ tables, chains: chains.value, sets, declared }, name) };
  },
});
