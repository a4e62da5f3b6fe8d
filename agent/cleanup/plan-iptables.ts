import type { ToolName } from "../io/tools.js";
import { shellQuote } from "../parse/iptables-argv.js";
import { isKubeProxyChain, KUBE_PROXY_JUMP_COMMENTS } from "../facts/owners.js";
import type { IptablesRuleSet, SavedRule } from "./iptables-rules.js";
import type { CleanupAction, KeptItem } from "./schema.js";

// kubelet's, kube-router's and unknown KUBE-* chains are never touched: facts/owners.ts isKubeProxyChain decides.

const MODIFY_TOOL: Record<IptablesRuleSet["backend"], Record<IptablesRuleSet["family"], ToolName>> = {
  legacy: { ipv4: "iptables-legacy", ipv6: "ip6tables-legacy" },
  nft: { ipv4: "iptables-nft", ipv6: "ip6tables-nft" },
};

// Wait for the xtables lock rather than fail when kubelet or a CNI holds it.
const WAIT = ["-w", "5"];

interface IptablesPlan {
  actions: CleanupAction[];
  kept: KeptItem[];
  /** Sets still matched by a rule that stays (a foreign rule, kubelet's, or a kept chain). */
  setsInUse: Map<string, string>;
}

function action(
  rs: IptablesRuleSet,
  step: CleanupAction["step"],
  target: string,
  args: string[],
): CleanupAction {
  const tool = MODIFY_TOOL[rs.backend][rs.family];
  const full = [...WAIT, ...args];
  return { step, target, run: { kind: "exec", tool, args: full }, command: shellQuote([tool, ...full]) };
}

const ruleText = (r: SavedRule) => shellQuote(r.argv);

/**
 * kube-proxy's jump rules out of the built-in chains (known by their "kubernetes ..." comments),
 * then its chains flushed, then deleted. A chain a foreign rule still jumps to stays whole, with
 * every kube-proxy chain it leads to, so that rule keeps doing what it did.
 */
export function planIptables(ruleSets: readonly IptablesRuleSet[]): IptablesPlan {
  const actions: CleanupAction[] = [];
  const kept: KeptItem[] = [];
  const setsInUse = new Map<string, string>();
  const jumps: CleanupAction[] = [];
  const flushes: CleanupAction[] = [];
  const deletes: CleanupAction[] = [];
  for (const rs of ruleSets) {
    const where = `${rs.backend} ${rs.family}`;
    for (const t of rs.tables) {
      const ours = (c: string) => isKubeProxyChain(t.table, c);
      const builtins = new Set(t.builtins);
      const isJump = (r: SavedRule) =>
        builtins.has(r.chain) &&
        r.target !== null &&
        ours(r.target) &&
        r.comment !== null &&
        KUBE_PROXY_JUMP_COMMENTS.has(r.comment);
      const keptWhy = new Map<string, string>();
      for (const r of t.rules) {
        if (r.target === null || !ours(r.target) || ours(r.chain) || isJump(r)) continue;
        if (!keptWhy.has(r.target))
          keptWhy.set(r.target, `a rule kube-proxy did not write still jumps to it: ${ruleText(r)}`);
      }
      // Whatever a kept chain jumps to must stay too, or deleting it would fail (and change that path).
      const queue = [...keptWhy.keys()];
      while (queue.length > 0) {
        const from = queue.shift() as string;
        for (const r of t.rules) {
          if (r.chain !== from || r.target === null || !ours(r.target) || keptWhy.has(r.target)) continue;
          keptWhy.set(r.target, `reached from ${from}, which stays`);
          queue.push(r.target);
        }
      }
      for (const [chain, why] of keptWhy) kept.push({ what: `${where} ${t.table}/${chain}`, why });
      for (const r of t.rules) {
        if (isJump(r)) {
          jumps.push(
            action(rs, "iptables-delete-jump", `${where} ${t.table}/${r.chain} -> ${r.target}`, [
              "-t",
              t.table,
              "-D",
              ...r.argv.slice(1),
            ]),
          );
        }
        const stays = !ours(r.chain) || keptWhy.has(r.chain);
        if (stays && !isJump(r)) {
          for (const s of r.matchSets)
            if (!setsInUse.has(s))
              setsInUse.set(s, `matched by ${where} ${t.table}/${r.chain}, which stays: ${ruleText(r)}`);
        }
      }
      for (const c of t.chains) {
        if (!ours(c) || keptWhy.has(c)) continue;
        const target = `${where} ${t.table}/${c}`;
        flushes.push(action(rs, "iptables-flush-chain", target, ["-t", t.table, "-F", c]));
        deletes.push(action(rs, "iptables-delete-chain", target, ["-t", t.table, "-X", c]));
      }
    }
  }
  // Every reference into a chain must be gone before any chain is deleted.
  actions.push(...jumps, ...flushes, ...deletes);
  return { actions, kept, setsInUse };
}
