import type { IptablesBackendRead } from "../facts/netfilter.js";
import {
  FIREWALL_CHAIN_PATTERNS,
  KUBE_PROXY_JUMP_COMMENTS,
  chainOwner,
  isKubeletJump,
  isKubeProxyChain,
  isKubeProxyIpset,
  perServicePattern,
} from "../facts/owners.js";
import { IptablesSaveReader, type SaveRule } from "./iptables-save-lines.js";
import { parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

type Backend = IptablesBackendRead["backend"];
type Family = IptablesBackendRead["family"];

// Bounded so a node full of foreign rules cannot grow the report without limit.
const MAX_LISTED = 200;
// The filter chains Docker's bridge driver creates (moby libnetwork iptables: DOCKER, DOCKER-USER,
// DOCKER-ISOLATION-STAGE-1/2; newer DOCKER-FORWARD, DOCKER-CT, DOCKER-BRIDGE, DOCKER-INTERNAL).
const DOCKER_CHAIN = /^DOCKER(-[A-Z0-9-]+)?$/;
// kube-proxy's chains whose ACCEPT rules let NodePort / health-check traffic in today.
/** How FORWARD's jumps name `-A FORWARD -j ACCEPT` (a comment aside): every packet accepted. */
export const UNCONDITIONAL_ACCEPT = "ACCEPT (every packet)";
const COMMENT = / -m comment --comment ("(?:[^"\\]|\\.)*"|\S+)/g;
const unconditional = (rule: string) => rule.replace(COMMENT, "") === "-A FORWARD -j ACCEPT";

// The xt_ipvs match (iptables-extensions(8) "ipvs"): only IPVS-handled packets match it.
const IPVS_MATCH = /(^| )-m ipvs( |$)/;
const NODEPORT_ACCEPT_CHAINS = new Set(["KUBE-NODEPORTS", "KUBE-NODE-PORT", "KUBE-FORWARD"]);

/**
 * The iptables probe's reader of `iptables-save -c`: counts, owners and the few rules that matter, so an
 * iptables-mode node with hundreds of thousands of rules costs little memory.
 */
export class IptablesSaveParser {
  private readonly reader = new IptablesSaveReader({
    chain: (table, name, policy) => this.declare(table, name, policy),
    rule: (r) => this.rule(r),
  });
  private totalRules = 0;
  private readonly kubeChainRules = new Map<string, number>();
  private readonly firewallRules = new Map<string, number>();
  private readonly dockerChains: string[] = [];
  private readonly forwardJumps = new Set<string>();
  private readonly ipvsMatches: NonNullable<IptablesBackendRead["ipvsMatches"]> = [];
  private ipvsMatchCount = 0;
  private readonly patternCounts: Record<string, number> = {};
  private readonly policies: Record<string, string> = {};
  private readonly foreignJumps: IptablesBackendRead["foreignJumps"] = [];
  private readonly foreignSetMatches: NonNullable<IptablesBackendRead["foreignSetMatches"]> = [];
  private readonly nodePortAccepts: IptablesBackendRead["nodePortAccepts"] = [];

  constructor(
    private readonly backend: Backend,
    private readonly family: Family,
  ) {}

  feed(raw: string): void {
    this.reader.feed(raw);
  }

  private declare(table: string, name: string, policy: string): void {
    if (policy !== "-") {
      this.policies[`${table}/${name}`] = policy;
      return;
    }
    const pattern = perServicePattern(name);
    if (pattern !== null) {
      this.patternCounts[pattern] = (this.patternCounts[pattern] ?? 0) + 1;
    } else if (name.startsWith("KUBE-")) {
      this.kubeChainRules.set(`${table}\u0000${name}`, 0);
    } else if (table === "filter" && DOCKER_CHAIN.test(name)) {
      if (this.dockerChains.length < MAX_LISTED) this.dockerChains.push(name);
    } else if (FIREWALL_CHAIN_PATTERNS.some((p) => p.test(name))) {
      this.firewallRules.set(name, this.firewallRules.get(name) ?? 0);
    }
  }

  private rule({ table, chain, text: rule, target, comment, matchSets, packets, bytes }: SaveRule): void {
    this.totalRules++;
    const key = `${table}\u0000${chain}`;
    const kubeCount = this.kubeChainRules.get(key);
    if (kubeCount !== undefined) this.kubeChainRules.set(key, kubeCount + 1);
    const fwCount = this.firewallRules.get(chain);
    if (fwCount !== undefined) this.firewallRules.set(chain, fwCount + 1);
    // Only kube-proxy's own chains and sets go away with its mode: a KUBE-* name is not enough (kube-router's
    // KUBE-ROUTER-*, KUBE-POD-FW-*, KUBE-NWPLCY-* chains and KUBE-SRC-*/KUBE-DST-* sets stay, kubelet's too).
    const outside = !isKubeProxyChain(table, chain);
    if (outside && IPVS_MATCH.test(rule) && this.ipvsMatchCount++ < MAX_LISTED)
      this.ipvsMatches.push({ table, chain, rule });
    if (outside) {
      for (const set of matchSets) {
        if (isKubeProxyIpset(set) && this.foreignSetMatches.length < MAX_LISTED)
          this.foreignSetMatches.push({ table, chain, rule, set });
      }
    }
    if (target === null) return;
    if (table === "filter" && chain === "FORWARD" && this.forwardJumps.size < MAX_LISTED)
      this.forwardJumps.add(target === "ACCEPT" && unconditional(rule) ? UNCONDITIONAL_ACCEPT : target);

    if (outside && isKubeProxyChain(table, target)) {
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
  finish(): Result<IptablesBackendRead> {
    const error = this.reader.finish();
    if (error !== null) return unparsable(error);
    const kubeChains: IptablesBackendRead["kubeChains"] = [];
    for (const [key, rules] of this.kubeChainRules) {
      const [table, name] = key.split("\u0000") as [string, string];
      kubeChains.push({ table, name, rules, owner: chainOwner(table, name) });
    }
    return parsed({
      backend: this.backend,
      family: this.family,
      read: true,
      totalRules: this.totalRules,
      kubeChains,
      patternCounts: { ...this.patternCounts },
      foreignJumps: [...this.foreignJumps],
      foreignSetMatches: [...this.foreignSetMatches],
      policies: { ...this.policies },
      nodePortAccepts: [...this.nodePortAccepts],
      firewallChains: Object.fromEntries(this.firewallRules),
      dockerChains: [...this.dockerChains],
      forwardJumps: [...this.forwardJumps],
      ipvsMatches: [...this.ipvsMatches],
      ipvsMatchCount: this.ipvsMatchCount,
    });
  }
}

/** Whole-text convenience for tests and small inputs. */
export function parseIptablesSave(
  text: string,
  backend: Backend,
  family: Family,
): Result<IptablesBackendRead> {
  const p = new IptablesSaveParser(backend, family);
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  for (const l of lines) p.feed(l);
  return p.finish();
}
