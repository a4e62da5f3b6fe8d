import { IptablesSaveReader } from "../parse/iptables-save-lines.js";

/** One rule kept from iptables-save: those that jump to a user chain or match an ipset. */
export interface SavedRule {
  chain: string;
  /** The rule as iptables-save printed it, split into argv, starting with "-A". */
  argv: string[];
  target: string | null;
  comment: string | null;
  matchSets: string[];
}

interface SavedTable {
  table: string;
  /** Built-in chains (they have a policy): PREROUTING, INPUT, ... */
  builtins: string[];
  /** User-defined chains. */
  chains: string[];
  rules: SavedRule[];
}

export interface IptablesRuleSet {
  backend: "legacy" | "nft";
  family: "ipv4" | "ipv6";
  tables: SavedTable[];
}

/**
 * Cleanup's reader of iptables-save: keeps only who jumps where and who matches which set, so a leftover
 * iptables-mode table of 100,000 rules stays cheap.
 */
export class RuleSetParser {
  private readonly tables: SavedTable[] = [];
  private current: (SavedTable & { userChains: Set<string> }) | null = null;
  private readonly reader = new IptablesSaveReader({
    chain: (table, name, policy) => {
      const t = this.open(table);
      if (policy === "-") {
        t.chains.push(name);
        t.userChains.add(name);
      } else t.builtins.push(name);
    },
    rule: ({ table, chain, argv, target, comment, matchSets }) => {
      const t = this.open(table);
      if ((target !== null && t.userChains.has(target)) || matchSets.length > 0)
        t.rules.push({ chain, argv, target, comment, matchSets });
    },
    commit: (table) => {
      const t = this.open(table);
      this.tables.push({ table: t.table, builtins: t.builtins, chains: t.chains, rules: t.rules });
      this.current = null;
    },
  });

  private open(table: string): SavedTable & { userChains: Set<string> } {
    if (this.current === null || this.current.table !== table)
      this.current = { table, builtins: [], chains: [], rules: [], userChains: new Set() };
    return this.current;
  }

  feed(raw: string): void {
    this.reader.feed(raw);
  }

  finish(): { ok: true; tables: SavedTable[] } | { ok: false; error: string } {
    const error = this.reader.finish();
    return error !== null ? { ok: false, error } : { ok: true, tables: this.tables };
  }
}

export function parseRuleSet(
  text: string,
  backend: IptablesRuleSet["backend"],
  family: IptablesRuleSet["family"],
): IptablesRuleSet | { error: string } {
  const p = new RuleSetParser();
  for (const l of text.split("\n")) p.feed(l);
  const r = p.finish();
  return r.ok ? { backend, family, tables: r.tables } : { error: r.error };
}
