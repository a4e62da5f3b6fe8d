import type { ProbeError } from "../facts/probe-error.js";
import type { Finding, NodeFacts, Phase, Verdict } from "../report/schema.js";
import * as after from "./after-switch.js";
import * as any from "./any-mode.js";
import * as before from "./before-switch.js";
import { DEFAULT_RULE_OPTIONS, type Rule, type RuleInput, type RuleOptions } from "./input.js";
import { decidePhase, type PhaseDecision } from "./phase.js";
import { REF } from "./references.js";
import { decideVerdict } from "./verdict.js";

// Every rule, registered in one place; each is pure and small. Whether the mode is pinned, and whether
// the ConfigMap agrees with what runs, are cluster checks: /configz is already defaulted and merged with
// flags (cmd/kube-proxy/app/server_linux.go), so a node cannot see an empty mode: or a drifted ConfigMap.
export const RULES: readonly Rule[] = [
  before.kernelTooOld,
  before.nftTooOld,
  before.nftTooNewForKubeProxy,
  before.nftModulesMissing,
  before.foreignIpvsUsers,
  before.nodePortsOnSecondaryAddresses,
  before.localhostNodePorts,
  before.conntrackWorkaround,
  before.hostFirewall,
  before.foreignChainReferences,
  before.ipvsScheduler,
  before.ipvsTimeouts,
  before.etpLocalWithoutEndpoints,
  after.kubeIpvs0Left,
  after.ipvsLeft,
  after.ipsetsLeft,
  after.ipvsChainsLeft,
  after.strictArpLeft,
  after.nftablesTableMissing,
  after.localhostNodePortsRejected,
  any.syncFailing,
  any.cleanupFailing,
  any.rulesStale,
  any.kubeProxyNotAnswering,
  any.kubeProxyUnhealthy,
  any.deprecationStage,
  any.kubeProxyFree,
];

export interface Judgement extends PhaseDecision {
  findings: Finding[];
  verdict: Verdict;
}

const SEVERITY_ORDER = { critical: 0, error: 1, warning: 2, info: 3 } as const;

export function judge(
  facts: NodeFacts,
  failedProbes: ReadonlyMap<string, ProbeError>,
  now: number,
  opts: RuleOptions = DEFAULT_RULE_OPTIONS,
): Judgement {
  const decision = decidePhase(facts, failedProbes);
  const runningMode = facts.proxyMode?.mode.trim() || null;
  const input: RuleInput = { facts, failedProbes, now, phase: decision.phase, runningMode };
  const findings = RULES.flatMap((r) => r(input, opts));
  findings.push(...rollbackLeftovers(decision.phase, decision.mixed));
  findings.push(...scanIncomplete(decision.phase, runningMode, failedProbes));
  findings.sort(
    (a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || a.id.localeCompare(b.id),
  );
  return { ...decision, findings, verdict: decideVerdict(decision.phase, findings) };
}

/**
 * A probe that could not read its part of the node leaves a hole no verdict may paper over: such a
 * node is never "ready" or "clean". kube-proxy's endpoints not answering is its own finding, and on a
 * kube-proxy-free node it is the expected answer, so those count only when /proxyMode did answer.
 */
function scanIncomplete(
  phase: Phase,
  runningMode: string | null,
  failed: ReadonlyMap<string, ProbeError>,
): Finding[] {
  const relevant = [...failed].filter(([name]) => !name.startsWith("kube-proxy-") || runningMode !== null);
  if (relevant.length === 0 || phase === "unknown") return [];
  return [
    {
      id: "scan-incomplete",
      severity: "warning",
      stage: "any",
      blocksMigration: false,
      title: `${relevant.length} probes could not read their part of this node; the verdict cannot be ready or clean`,
      evidence: { failedProbes: relevant.map(([name, e]) => `${name}: ${e.kind}: ${e.message}`) },
      remedy:
        "Fix what each probe names (a missing tool, a missing capability such as NET_ADMIN/NET_RAW, a timeout) and scan again",
      reference: REF.verify,
    },
  ];
}

/** nftables state on a node back in ipvs/iptables mode: a rollback whose cleanup did not run. */
function rollbackLeftovers(phase: Phase, mixed: PhaseDecision["mixed"]): Finding[] {
  if (phase !== "ipvs" && phase !== "iptables") return [];
  const nft = mixed.filter((m) => m.mode === "nftables");
  if (nft.length === 0) return [];
  return [
    {
      id: "nftables-state-after-rollback",
      severity: "warning",
      stage: "any",
      blocksMigration: false,
      title: `kube-proxy runs ${phase} mode but kube-proxy's nftables tables are still present`,
      evidence: { tables: nft.map((m) => m.evidence) },
      remedy: "nft delete table ip kube-proxy; nft delete table ip6 kube-proxy",
      reference: REF.leftovers,
    },
  ];
}
