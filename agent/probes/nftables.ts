import type { ConfigzFacts } from "../facts/kube-proxy.js";
import { kubeProxyTableName } from "../facts/kube-proxy-table.js";
import type { ProbeError } from "../facts/probe-error.js";
import type { ExecResult } from "../io/run.js";
import {
  eachNftChain,
  parseNftSetNames,
  parseNftSets,
  type NftSet,
  type NftSetName,
  type NftTable,
} from "../parse/nft-json.js";
import { chainSummaryBuilder, nftablesFacts, setsToCount } from "../parse/nftables-facts.js";
import { addChain, chainServed, type NftChainServed } from "../parse/nft-services.js";
import type { NftablesFacts } from "../facts/netfilter.js";
import { gatedRead, type Read } from "./gated-read.js";
import { defineProbe, type ProbeContext } from "./types.js";
import type { Result } from "../../common/result.js";

// What each read costs at 10,000 Services x 10 endpoints on nft 1.0.6 (Debian 12), measured by
// bench/nft-calls.ts (bench/results/nft-calls-10000.md): `list chains` ~3 s of CPU, the only way short of
// a whole-ruleset cache to learn every table and base chain on 1.0.6; `-t list sets|maps` ~0.1 s (names,
// no elements); `list set|map <one>` 0.03-0.5 s. Never `list sets|maps <family>` (8-14 s: 1.0.6 fetches
// the elements of all ~10,000 anonymous vmaps to print the named ones), `list table`, `list tables` or
// `list chain <one>` (each builds the full cache on 1.0.6, 28-60 s).
const MAX_BYTES = 128 * 1024 * 1024;
// What nft prints when the kernel has no nf_tables at all (nfnetlink answers EPROTONOSUPPORT, or
// EOPNOTSUPP from some builds); reported as such rather than as a bare exit status.
const NO_NF_TABLES = /protocol not supported|operation not supported/i;

function tableName(ctx: ProbeContext): string {
  const prior = ctx.prior["kube-proxy-configz"];
  return kubeProxyTableName(prior?.ok ? (prior.facts as ConfigzFacts) : null);
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
  parse: (text: string) => Result<T>,
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

const CHAINS = ["-j", "list", "chains"];

/** One set or map's elements, keeping nft's answer for parity to reuse in this scan. */
async function listedSet(ctx: ProbeContext, s: NftSetName): Promise<Read<{ sets: NftSet[]; text: string }>> {
  const args = ["-j", "list", s.kind, s.family, s.table, s.name];
  let text = "";
  const r = await listed(ctx, args, parseNftSets, (t) => (text = t));
  return r.ok ? { ok: true, value: { sets: r.value, text } } : r;
}

const setArgv = (s: NftSetName) => ["-j", "list", s.kind, s.family, s.table, s.name].join(" ");

// What a read keeps, in the scan and in the cache between scans. Parity (off unless --parity-snapshot)
// is the only reader of the listings once the facts are made. Kept whole they were 110,000 chain objects
// at 10,000 Services (17 MB, bench/results/rss.md) and a few MB of nft's answers: parity keeps only the
// endpoints it compares, and without parity nothing is kept.
interface NftRead {
  facts: NftablesFacts;
  /** What parity takes from kube-proxy's chains (endpoints per Service port), parity on only. */
  parityChains?: NftChainServed;
  /** nft's answers by argv, for parity to reuse in the same scan; parity on only. */
  setAnswers?: [string, string][];
}

/** The cache key's parts besides the generation: a read kept without parity's listings never serves parity. */
export function nftablesCacheParts(table: string, parity: boolean): string[] {
  return [`table ${table}`, `parity ${parity ? "on" : "off"}`];
}

/** Every nftables read the report needs: declarations, the counted sets' elements, the chains. */
async function readAll(ctx: ProbeContext, name: string, forParity: boolean): Promise<Read<NftRead>> {
  const declared: NftSetName[] = [];
  for (const what of ["sets", "maps"]) {
    const r = await listed(ctx, ["-j", "-t", "list", what], parseNftSetNames);
    if (!r.ok) return r;
    declared.push(...r.value);
  }
  // Elements only where a count is a fact, one set or map per call: any of them unread fails the
  // probe, so a count is never a zero that stands for "not read".
  const setAnswers: [string, string][] = [];
  const sets: NftSet[] = [];
  for (const s of setsToCount(declared, name)) {
    const r = await listedSet(ctx, s);
    if (!r.ok) return r;
    setAnswers.push([setArgv(s), r.value.text]);
    sets.push(...r.value.sets);
  }
  // Summarised as it is parsed, item by item: the listing (110,000 chains at 10,000 Services) is
  // never one JSON tree nor one array, and only the endpoints parity compares are kept.
  const summary = chainSummaryBuilder();
  const parityChains = forParity ? chainServed() : null;
  const chains = await listed(ctx, CHAINS, (text) =>
    eachNftChain(text, (c) => {
      summary.add(c);
      if (parityChains !== null) addChain(parityChains, c, name);
    }),
  );
  if (!chains.ok) return chains;
  const tables = tablesOf([
    ...summary.summary.tables.map((t) => ({ family: t.family, table: t.name })),
    ...declared,
  ]);
  const facts = nftablesFacts({ tables, chains: summary.summary, sets, declared }, name);
  return { ok: true, value: parityChains !== null ? { facts, parityChains, setAnswers } : { facts } };
}

export interface NftablesOptions {
  /** --parity-snapshot is set: also read what parity compares (the Service chains and maps). */
  forParity: boolean;
}

export const nftablesProbe = defineProbe("nftables", {
  needs: ["kube-proxy-configz"],
  async run(ctx, { forParity }: NftablesOptions) {
    const name = tableName(ctx);
    // Reused whole while the nf_tables generation stands still: at 10,000 Services these reads cost
    // seconds of CPU (the chain listing alone ~3 s on nft 1.0.6), and none of them can have changed.
    const parts = nftablesCacheParts(name, forParity);
    const r = await gatedRead(ctx, "nftables", parts, () => readAll(ctx, name, forParity));
    if (!r.ok) return r;
    if (ctx.shared && r.value.parityChains !== undefined) ctx.shared.nftChainServed = r.value.parityChains;
    if (ctx.shared)
      for (const [argv, text] of r.value.setAnswers ?? []) ctx.shared.nftSetAnswers.set(argv, text);
    return { ok: true, facts: r.value.facts };
  },
});
