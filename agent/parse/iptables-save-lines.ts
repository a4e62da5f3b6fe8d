import { splitIptablesRule } from "./iptables-argv.js";
import { clip, excerpt } from "./result.js";

/** One rule line of iptables-save, split once for every reader. */
export interface SaveRule {
  table: string;
  chain: string;
  /** The rule as iptables-save printed it, counters removed ("-A INPUT -j KUBE-FIREWALL"). */
  text: string;
  /** The same split into argv, starting with "-A". */
  argv: string[];
  target: string | null;
  comment: string | null;
  matchSets: string[];
  /** From `iptables-save -c`; 0 without counters. */
  packets: number;
  bytes: number;
}

export interface SaveVisitor {
  /** A chain declaration: policy "-" for a user chain, ACCEPT/DROP/... for a built-in one. */
  chain(table: string, name: string, policy: string): void;
  rule(r: SaveRule): void;
  commit?(table: string): void;
}

// Packet and byte counters are u64: at most 20 digits, always finite as a Number.
const COUNTERS = /^\[(\d{1,20}):(\d{1,20})\]\s+/;
const CHAIN_DECL = /^:(\S+)\s+(\S+)(?:\s+\[\d+:\d+\])?$/;
// A comment is free text (xt_comment: up to 255 bytes, newlines included) that iptables-save prints raw
// inside "...", so one rule can span lines; this bounds how long a rule may stay open.
const MAX_RULE_CHARS = 64 * 1024;

/**
 * The iptables-save format, read one line at a time (tables, chain declarations, rules with or without
 * counters, COMMIT): the one parser of it, whose readers (the iptables probe's facts, cleanup's rule
 * set) keep only what they need, so 100,000 rules cost little memory.
 */
export class IptablesSaveReader {
  private table: string | null = null;
  private error: string | null = null;
  private lineNo = 0;
  /** A rule whose quoted string is still open: the next line continues it. */
  private pending: string | null = null;

  constructor(private readonly visitor: SaveVisitor) {}

  feed(raw: string): void {
    this.lineNo++;
    if (this.error !== null) return;
    if (this.pending !== null) {
      const joined = `${this.pending}\n${raw}`;
      this.pending = null;
      return this.ruleLine(this.table as string, joined, joined);
    }
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line === "" || line.startsWith("#")) return;
    if (line.startsWith("*")) {
      if (this.table !== null)
        return this.fail(`table *${clip(this.table)} not committed before ${excerpt(line)}`);
      this.table = line.slice(1).trim();
      if (this.table === "") return this.fail("empty table name");
      return;
    }
    const table = this.table;
    if (table === null) return this.fail(`line outside a table: ${excerpt(line)}`);
    if (line === "COMMIT") {
      this.table = null;
      this.visitor.commit?.(table);
      return;
    }
    if (line.startsWith(":")) {
      const d = CHAIN_DECL.exec(line);
      if (!d) return this.fail(`bad chain line ${excerpt(line)}`);
      this.visitor.chain(table, d[1] as string, d[2] as string);
      return;
    }
    this.ruleLine(table, line, raw);
  }

  /** `raw`: the same line with a trailing CR kept, in case it belongs to a quoted string. */
  private ruleLine(table: string, line: string, raw: string): void {
    const m = COUNTERS.exec(line);
    const text = m ? line.slice(m[0].length) : line;
    if (!text.startsWith("-A ")) return this.fail(`not a rule: ${excerpt(line)}`);
    const argv = splitIptablesRule(text);
    if (argv === null) {
      if (raw.length > MAX_RULE_CHARS)
        return this.fail(`a quoted string runs past ${MAX_RULE_CHARS} characters in ${excerpt(text)}`);
      this.pending = raw;
      return;
    }
    if (argv.length < 2) return this.fail(`not a rule: ${excerpt(text)}`);
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
    this.visitor.rule({
      table,
      chain: argv[1] as string,
      text,
      argv,
      target,
      comment,
      matchSets,
      packets: m ? Number(m[1]) : 0,
      bytes: m ? Number(m[2]) : 0,
    });
  }

  private fail(why: string): void {
    this.error = `iptables-save line ${this.lineNo}: ${why}`;
  }

  /** null, or why the text was not iptables-save output (including output cut short). */
  finish(): string | null {
    if (this.error !== null) return this.error;
    if (this.pending !== null)
      return `iptables-save output ends inside a quoted string: ${excerpt(this.pending)}`;
    if (this.table !== null) return `iptables-save output ends inside table *${clip(this.table)} (no COMMIT)`;
    return null;
  }
}
