import type { ProbeError } from "../facts/probe-error.js";
import { partialFailure, unreadParts } from "../facts/unread.js";
import { FACT_KEY, FACT_SOURCES, type ProbeRun } from "../facts/sources.js";
import { SCHEMA_VERSION, type NodeFacts, type NodeReport } from "../report/schema.js";
import { judge } from "../rules/index.js";
import { DEFAULT_RULE_OPTIONS, type RuleOptions } from "../view/options.js";
import { summarize } from "../view/summary.js";

// The report stays bounded on a 10,000-Service node: long lists are cut here, counts stay exact.
const CAPS = {
  virtualServers: 200,
  kubeIpvs0Addresses: 1024,
  // Per interface: kube-ipvs0 holds every Service IP, and it is listed here too.
  interfaceAddresses: 1024,
  foreignJumps: 100,
  nodePortAccepts: 100,
  // The busiest first: the cut keeps the Services that matter; the view counted them all before.
  ipvsConnectionAddresses: 200,
} as const;

interface BuildMeta {
  node: string;
  agentVersion: string;
  startedAt: Date;
  finishedAt: Date;
  /** The previous scan's report (serve keeps it): failure counters are judged by what rose since. */
  previous?: NodeReport | null;
}

export function factsFrom(runs: readonly ProbeRun[]): NodeFacts {
  const facts = Object.fromEntries(FACT_SOURCES.map((s) => [s.key, null])) as Record<
    keyof NodeFacts,
    unknown
  >;
  for (const r of runs) if (r.outcome.ok) facts[FACT_KEY[r.name]] = r.outcome.facts;
  return facts as NodeFacts;
}

export function buildReport(
  runs: readonly ProbeRun[],
  meta: BuildMeta,
  opts: RuleOptions = DEFAULT_RULE_OPTIONS,
): NodeReport {
  const facts = factsFrom(runs);
  const unread = unreadParts(facts);
  // A probe that read only part of what it covers failed: what it did read stays in the facts.
  const errorOf = (r: ProbeRun): ProbeError | null =>
    r.outcome.ok ? partialFailure(unread.filter((u) => u.probe === r.name)) : r.outcome.error;
  const failed = new Map(
    runs.flatMap((r) => {
      const e = errorOf(r);
      return e === null ? [] : [[r.name as string, e] as const];
    }),
  );
  const j = judge(facts, failed, meta.finishedAt.getTime() / 1000, opts, meta.previous?.facts ?? null);
  const truncated: Record<string, number> = {};
  return {
    schemaVersion: SCHEMA_VERSION,
    agentVersion: meta.agentVersion,
    node: meta.node,
    scannedAt: meta.finishedAt.toISOString(),
    scanDurationMs: Math.round(meta.finishedAt.getTime() - meta.startedAt.getTime()),
    phase: j.phase,
    phaseSource: j.source,
    mixed: j.mixed,
    verdict: j.verdict,
    findings: j.findings,
    view: summarize(j.view),
    probes: runs.map((r) => ({
      name: r.name,
      ok: errorOf(r) === null,
      error: errorOf(r),
      durationMs: Math.round(r.durationMs * 10) / 10,
    })),
    truncated,
    facts: bound(facts, truncated),
  };
}

function cut<T>(list: T[], cap: number, path: string, truncated: Record<string, number>): T[] {
  if (list.length <= cap) return list;
  truncated[path] = list.length;
  return list.slice(0, cap);
}

function bound(f: NodeFacts, truncated: Record<string, number>): NodeFacts {
  return {
    ...f,
    ipvs: f.ipvs && {
      ...f.ipvs,
      virtualServers: cut(f.ipvs.virtualServers, CAPS.virtualServers, "facts.ipvs.virtualServers", truncated),
    },
    ipvsConnections: f.ipvsConnections && {
      ...f.ipvsConnections,
      byVirtualAddress: cut(
        f.ipvsConnections.byVirtualAddress,
        CAPS.ipvsConnectionAddresses,
        "facts.ipvsConnections.byVirtualAddress",
        truncated,
      ),
    },
    addresses: f.addresses && {
      ...f.addresses,
      interfaces: f.addresses.interfaces.map((i) => ({
        ...i,
        addresses: cut(
          i.addresses,
          CAPS.interfaceAddresses,
          `facts.addresses.interfaces.${i.name}.addresses`,
          truncated,
        ),
      })),
    },
    kubeIpvs0: f.kubeIpvs0 && {
      ...f.kubeIpvs0,
      addresses: cut(f.kubeIpvs0.addresses, CAPS.kubeIpvs0Addresses, "facts.kubeIpvs0.addresses", truncated),
    },
    iptables: f.iptables && {
      backends: f.iptables.backends.map((b) =>
        !b.read
          ? b
          : {
              ...b,
              foreignJumps: cut(
                b.foreignJumps,
                CAPS.foreignJumps,
                `facts.iptables.${b.backend}.${b.family}.foreignJumps`,
                truncated,
              ),
              ...(b.foreignSetMatches && {
                foreignSetMatches: cut(
                  b.foreignSetMatches,
                  CAPS.foreignJumps,
                  `facts.iptables.${b.backend}.${b.family}.foreignSetMatches`,
                  truncated,
                ),
              }),
              nodePortAccepts: cut(
                b.nodePortAccepts,
                CAPS.nodePortAccepts,
                `facts.iptables.${b.backend}.${b.family}.nodePortAccepts`,
                truncated,
              ),
            },
      ),
    },
  };
}
