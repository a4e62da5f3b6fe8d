import type { ProbeError } from "../../agent/facts/probe-error.js";
import { buildReport } from "../../agent/assemble/report.js";
import type { NodeFacts, NodeReport } from "../../agent/report/schema.js";
import { FACT_KEY, PROBE_NAMES, type ProbeName, type ProbeRun } from "../../agent/facts/sources.js";
import { emptyFacts, metrics, noKernelState, iptablesBackend } from "./facts.js";

/**
 * A report through the real builder and rules: every probe in `facts` succeeded with those facts,
 * every probe in `failed` failed with that error; probes in neither did not run.
 */
export function reportOf(
  facts: Partial<NodeFacts>,
  failed: Partial<Record<ProbeName, ProbeError>> = {},
  finishedAt = new Date("2026-11-29T12:00:00Z"),
): NodeReport {
  const runs: ProbeRun[] = [];
  for (const name of PROBE_NAMES) {
    const key = FACT_KEY[name];
    const error = failed[name];
    if (error) runs.push({ name, outcome: { ok: false, error }, durationMs: 12.5 });
    else if (facts[key] !== undefined && facts[key] !== null)
      runs.push({ name, outcome: { ok: true, facts: facts[key] }, durationMs: 250 });
  }
  return buildReport(runs, {
    node: "node-a",
    agentVersion: "0.1.0",
    startedAt: new Date(finishedAt.getTime() - 1500),
    finishedAt,
  });
}

const NOW_S = Date.parse("2026-11-29T12:00:00Z") / 1000;

/** A node moved to nftables mode whose ipvs state was never cleaned: kube-ipvs0 still holds 3 Service IPs. */
export function movedWithBlackHole(over: Partial<NodeFacts> = {}): Partial<NodeFacts> {
  return {
    ...emptyFacts(),
    ...noKernelState,
    kernel: { release: "6.1.0-18-amd64", major: 6, minor: 1, patch: 0 },
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({
      kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW_S - 42,
      kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total: 2,
    }),
    ipvs: {
      available: true,
      virtualServerCount: 0,
      realServerCount: 0,
      schedulers: {},
      virtualServers: [],
      timeouts: null,
    },
    kubeIpvs0: {
      present: true,
      kind: "dummy",
      operState: "DOWN",
      flags: [],
      addresses: ["10.96.0.1", "10.96.0.10", "10.96.100.7"].map((address) => ({
        family: "inet" as const,
        address,
        prefixLen: 32,
      })),
    },
    ipsets: {
      sets: [
        {
          name: "KUBE-CLUSTER-IP",
          type: "hash:ip,port",
          family: "inet",
          entries: 3,
          references: 0,
          kubeProxy: true,
        },
        {
          name: "KUBE-LOOP-BACK",
          type: "hash:ip,port,ip",
          family: "inet",
          entries: 0,
          references: 0,
          kubeProxy: true,
        },
        {
          name: "my-blocklist",
          type: "hash:net",
          family: "inet",
          entries: 9,
          references: 1,
          kubeProxy: false,
        },
      ],
    },
    iptables: {
      backends: [
        iptablesBackend({
          totalRules: 12,
          kubeChains: [
            { table: "nat", name: "KUBE-NODE-PORT", rules: 0, owner: "kube-proxy-ipvs" },
            { table: "nat", name: "KUBE-SERVICES", rules: 2, owner: "kube-proxy" },
            { table: "filter", name: "KUBE-FIREWALL", rules: 1, owner: "kubelet" },
            { table: "mangle", name: "KUBE-KUBELET-CANARY", rules: 0, owner: "kubelet" },
          ],
        }),
        // No legacy tables in this kernel: read, and empty (the probe asks /proc/net/ip_tables_names).
        {
          backend: "legacy",
          family: "ipv4",
          read: true,
          totalRules: 0,
          kubeChains: [],
          patternCounts: {},
          foreignJumps: [],
          policies: {},
          nodePortAccepts: [],
          firewallChains: {},
          forwardJumps: [],
          ipvsMatches: [],
        },
      ],
    },
    nftables: {
      tables: [{ family: "ip", name: "kube-proxy", owner: "kube-proxy" }],
      kubeProxyTableName: "kube-proxy",
      kubeProxy: [
        {
          family: "ip",
          name: "kube-proxy",
          sets: [],
          chains: { total: 20, service: 3, endpoint: 4, external: 0, base: ["filter-input"] },
        },
      ],
      firewalls: [],
    },
    ...over,
  };
}
