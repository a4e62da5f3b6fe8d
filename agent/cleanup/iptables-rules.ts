import { splitIptablesRule } from "../parse/iptables-argv.js";

/** One rule kept from iptables-save: those that jump to a user chain or match an ipset. */
export interface SavedRule {
  chain: string;
  /** The rule as iptables-save printed it, split into argv, starting with "-A". */
  argv: string[];
  target: string | null;
  comment: string | null;
  matchSets: string[];
}

export interface SavedTable {
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

const CHAIN_DECL = /^:(\S+)\s+(\S+)/;

/**
 * Reads iptables-save text one line at a time and keeps only what cleanup needs (who jumps where,
 * who matches which set), so a leftover iptables-mode table of 100,000 rules stays cheap.
 */
export class RuleSetParser {
  private readonly tables: SavedTable[] = [];
  private current: (SavedTable & { userChains: Set<string> }) | null = null;
  private error: string | null = null;
  private lineNo = 0;

  feed(raw: string): void {
    this.lineNo++;
    if (this.error !== null) return;
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line === "" || line.startsWith("#")) return;
    if (line.startsWith("*")) {
      if (this.current !== null) return this.fail("table not committed");
      this.current = {
        table: line.slice(1).trim(),
        builtins: [],
        chains: [],
        rules: [],
        userChains: new Set(),
      };
      return;
    }
    const t = this.current;
    if (t === null) return this.fail("line outside a table");
    if (line === "COMMIT") {
      this.tables.push({ table: t.table, builtins: t.builtins, chains: t.chains, rules: t.rules });
      this.current = null;
      return;
    }
    if (line.startsWith(":")) {
      const d = CHAIN_DECL.exec(line);
      if (!d) return this.fail("bad chain declaration");
      const name = d[1] as string;
      if (d[2] === "-") {
        t.chains.push(name);
        t.userChains.add(name);
      } else t.builtins.push(name);
      return;
    }
    const body = line.replace(/^\[\d+:\d+\]\s+/, "");
    const argv = splitIptablesRule(body);
    if (argv === null || argv[0] !== "-A" || argv.length < 2) return this.fail("not a rule");
    let target: string | null = null;
    let comment: string | null = null;
    const matchSets: string[] = [];
    for (let i = 2; i < argv.length - 1; i++) {
      const a = argv[i];
      const next = argv[i + 1] as string;
      if (a === "-j" || a === "-g" || a === "--jump" || a === "--goto") target = next;
      else if (a === "--comment") comment = next;
      else if (a === "--match-set") matchSets.push(next);
    }
    if ((target !== null && t.userChains.has(target)) || matchSets.length > 0) {
      t.rules.push({ chain: argv[1] as string, argv, target, comment, matchSets });
    }
  }

  private fail(why: string): void {
    this.error = `iptables-save line ${this.lineNo}: ${why}`;
  }

  finish(): { ok: true; tables: SavedTable[] } | { ok: false; error: string } {
    if (this.error !== null) return { ok: false, error: this.error };
    if (this.current !== null) return { ok: false, error: `output ends inside table *${this.current.table}` };
    return { ok: true, tables: this.tables };
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
