import type { IptablesBackendFacts } from "../facts/netfilter.js";
import {
  FIREWALL_CHAIN_PATTERNS,
  KUBE_PROXY_JUMP_COMMENTS,
  chainOwner,
  isKubeletJump,
  perServicePattern,
} from "../facts/owners.js";
import { clip, excerpt, parsed, unparsable, type Parsed } from "./result.js";
import { splitIptablesRule } from "./iptables-argv.js";

type Backend = IptablesBackendFacts["backend"];
type Family = IptablesBackendFacts["family"];

// Bounded so a node full of foreign rules cannot grow the report without limit.
const MAX_LISTED = 200;
// kube-proxy's chains whose ACCEPT rules let NodePort / health-check traffic in today.
const NODEPORT_ACCEPT_CHAINS = new Set(["KUBE-NODEPORTS", "KUBE-NODE-PORT", "KUBE-FORWARD"]);

// Packet and byte counters are u64: at most 20 digits, always finite as a Number.
const COUNTERS = /^\[(\d{1,20}):(\d{1,20})\]\s+/;
const CHAIN_DECL = /^:(\S+)\s+(\S+)(?:\s+\[\d+:\d+\])?$/;

/**
 * Reads `iptables-save -c` output one line at a time, keeping only counts and the few rules that
 * matter, so an iptables-mode node with hundreds of thousands of rules costs little memory.
 */
export class IptablesSaveParser {
  private table: string | null = null;
  private error: string | null = null;
  private lineNo = 0;
  private totalRules = 0;
  private readonly kubeChainRules = new Map<string, number>();
  private readonly firewallRules = new Map<string, number>();
  private readonly patternCounts: Record<string, number> = {};
  private readonly policies: Record<string, string> = {};
  private readonly foreignJumps: IptablesBackendFacts["foreignJumps"] = [];
  private readonly nodePortAccepts: IptablesBackendFacts["nodePortAccepts"] = [];

  constructor(
    private readonly backend: Backend,
    private readonly family: Family,
  ) {}

  feed(raw: string): void {
    this.lineNo++;
    if (this.error !== null) return;
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line === "" || line.startsWith("#")) return;
    if (line.startsWith("*")) {
      if (this.table !== null)
        return this.fail(`table *${clip(this.table)} not committed before ${excerpt(line)}`);
      this.table = line.slice(1).trim();
      if (this.table === "") return this.fail("empty table name");
      return;
    }
    if (this.table === null) return this.fail(`outside a table: ${excerpt(line)}`);
    if (line === "COMMIT") {
      this.table = null;
      return;
    }
    if (line.startsWith(":")) return this.declare(this.table, line);
    const m = COUNTERS.exec(line);
    const rule = m ? line.slice(m[0].length) : line;
    if (!rule.startsWith("-A ")) return this.fail(`not a rule: ${excerpt(line)}`);
    this.rule(this.table, rule, m ? Number(m[1]) : 0, m ? Number(m[2]) : 0);
  }

  private fail(why: string): void {
    this.error = `iptables-save line ${this.lineNo}: ${why}`;
  }

  private declare(table: string, line: string): void {
    const d = CHAIN_DECL.exec(line);
    if (!d) return this.fail(`bad chain line ${excerpt(line)}`);
    const name = d[1] as string;
    const policy = d[2] as string;
    if (policy !== "-") {
      this.policies[`${table}/${name}`] = policy;
      return;
    }
    const pattern = perServicePattern(name);
    if (pattern !== null) {
      this.patternCounts[pattern] = (this.patternCounts[pattern] ?? 0) + 1;
    } else if (name.startsWith("KUBE-")) {
      this.kubeChainRules.set(`${table}\u0000${name}`, 0);
    } else if (FIREWALL_CHAIN_PATTERNS.some((p) => p.test(name))) {
      this.firewallRules.set(name, this.firewallRules.get(name) ?? 0);
    }
  }

  private rule(table: string, rule: string, packets: number, bytes: number): void {
    const argv = splitIptablesRule(rule);
    if (argv === null || argv.length < 2) return this.fail(`unbalanced quotes in ${excerpt(rule)}`);
    const chain = argv[1] as string;
    this.totalRules++;
    const key = `${table}\u0000${chain}`;
    const kubeCount = this.kubeChainRules.get(key);
    if (kubeCount !== undefined) this.kubeChainRules.set(key, kubeCount + 1);
    const fwCount = this.firewallRules.get(chain);
    if (fwCount !== undefined) this.firewallRules.set(chain, fwCount + 1);

    let target: string | null = null;
    let comment: string | null = null;
    for (let i = 2; i < argv.length - 1; i++) {
      const a = argv[i];
      if (a === "-j" || a === "-g" || a === "--jump" || a === "--goto") target = argv[i + 1] as string;
      else if (a === "--comment") comment = argv[i + 1] as string;
    }
    if (target === null) return;

    if (target.startsWith("KUBE-") && chainOwner(table, chain) === "unknown") {
      const ours =
        (comment !== null && KUBE_PROXY_JUMP_COMMENTS.has(comment)) ||
        isKubeletJump(table, chain, rule, target);
      if (!ours && this.foreignJumps.length < MAX_LISTED)
        this.foreignJumps.push({ table, chain, rule, target });
    }
    if (target === "ACCEPT" && table === "filter" && NODEPORT_ACCEPT_CHAINS.has(chain)) {
      if (this.nodePortAccepts.length < MAX_LISTED)
        this.nodePortAccepts.push({ table, chain, rule, packets, bytes });
    }
  }

  /** The facts, or why the text was not iptables-save output (including output cut short). */
  finish(): Parsed<IptablesBackendFacts> {
    if (this.error !== null) return unparsable(this.error);
    if (this.table !== null)
      return unparsable(`iptables-save output ends inside table *${clip(this.table)} (no COMMIT)`);
    const kubeChains: IptablesBackendFacts["kubeChains"] = [];
    for (const [key, rules] of this.kubeChainRules) {
      const [table, name] = key.split("\u0000") as [string, string];
      kubeChains.push({ table, name, rules, owner: chainOwner(table, name) });
    }
    return parsed({
      backend: this.backend,
      family: this.family,
      available: true,
      totalRules: this.totalRules,
      kubeChains,
      patternCounts: { ...this.patternCounts },
      foreignJumps: [...this.foreignJumps],
      policies: { ...this.policies },
      nodePortAccepts: [...this.nodePortAccepts],
      firewallChains: Object.fromEntries(this.firewallRules),
    });
  }
}

/** Whole-text convenience for tests and small inputs. */
export function parseIptablesSave(
  text: string,
  backend: Backend,
  family: Family,
): Parsed<IptablesBackendFacts> {
  const p = new IptablesSaveParser(backend, family);
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  for (const l of lines) p.feed(l);
  return p.finish();
}
