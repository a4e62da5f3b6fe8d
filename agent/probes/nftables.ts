import type { ConfigzFacts } from "../facts/kube-proxy.js";
import type { ProbeError } from "../facts/probe-error.js";
import type { ExecResult } from "../io/run.js";
import { parseNftChains, parseNftSets, type NftSet, type NftTable } from "../parse/nft-json.js";
import { nftablesFacts } from "../parse/nftables-facts.js";
import type { Parsed } from "../parse/result.js";
import { defineProbe, type ProbeContext } from "./types.js";

// Never `nft list ruleset` or `nft -j list table ip kube-proxy`: at 10,000 Services the latter takes
// ~28 s and ~1.7 GB. Chains (no rules) and sets/maps answer every question here; `list chains` is
// ~8 MB at that size. Not `list tables` either: nft 1.0.6 (Debian 12) answers it by fetching the
// whole ruleset, rules included (~40 s and ~750 MB at 10,000 Services, measured by bench/), so the
// tables are read off the chains, sets and maps instead. A table with none of those holds nothing
// any finding looks at.
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

function parsedOr<T>(
  p: Parsed<T>,
  command: string,
): { ok: true; value: T } | { ok: false; error: ProbeError } {
  return p.ok ? p : { ok: false, error: { kind: "garbage", message: p.error, command } };
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

export const nftablesProbe = defineProbe("nftables", {
  needs: ["kube-proxy-configz"],
  async run(ctx) {
    const name = tableName(ctx);
    const c = await nft(ctx, ["-j", "list", "chains"]);
    if (!c.ok) return c;
    const chains = parsedOr(parseNftChains(c.stdout), "nft -j list chains");
    if (!chains.ok) return chains;

    const sets: NftSet[] = [];
    const families = new Set(
      chains.value
        .filter((x) => x.table === name && (x.family === "ip" || x.family === "ip6"))
        .map((x) => x.family),
    );
    for (const family of families) {
      for (const what of ["sets", "maps"]) {
        const args = ["-j", "list", what, family];
        const r = await nft(ctx, args);
        if (!r.ok) return r;
        const p = parsedOr(parseNftSets(r.stdout), `nft ${args.join(" ")}`);
        if (!p.ok) return p;
        sets.push(...p.value);
      }
    }
    const tables = tablesOf([...chains.value, ...sets]);
    return { ok: true, facts: nftablesFacts({ tables, chains: chains.value, sets }, name) };
  },
});
