import type { ProbeError } from "../../agent/facts/probe-error.js";
import { NodeFacts } from "../../agent/report/schema.js";

/** Facts as if every probe failed or found nothing; tests fill in what a scenario has. */
export function emptyFacts(over: Partial<NodeFacts> = {}): NodeFacts {
  // Every key null, derived from the one list of probes (facts/sources.ts) so a new probe needs no edit here.
  return { ...NodeFacts.parse({}), ...over };
}

export const refused: ProbeError = { kind: "unreachable", message: "connect ECONNREFUSED 127.0.0.1:10249" };

export const noKernelState: Partial<NodeFacts> = {
  ipvs: {
    available: false,
    virtualServerCount: 0,
    realServerCount: 0,
    schedulers: {},
    virtualServers: [],
    timeouts: null,
  },
  kubeIpvs0: { present: false, kind: null, operState: null, flags: [], addresses: [] },
  ipsets: { sets: [] },
  iptables: { backends: [] },
  nftables: { tables: [], kubeProxyTableName: "kube-proxy", kubeProxy: [], firewalls: [] },
  // No --parity-snapshot: nothing recorded, nothing compared (the probe's answer when not asked).
  parity: { state: "off" },
};

export function configz(
  over: Partial<NonNullable<NodeFacts["configz"]>> = {},
): NonNullable<NodeFacts["configz"]> {
  return {
    mode: "ipvs",
    nodePortAddresses: [],
    featureGates: {},
    ipvs: {
      scheduler: "",
      strictARP: false,
      tcpTimeout: null,
      tcpFinTimeout: null,
      udpTimeout: null,
      excludeCIDRs: [],
    },
    nftablesTableName: null,
    conntrackTcpBeLiberal: null,
    metricsBindAddress: null,
    healthzBindAddress: null,
    detectLocalMode: null,
    clusterCIDR: null,
    ...over,
  };
}

export function metrics(
  values: Record<string, number>,
  gitVersion = "v1.33.1",
): NonNullable<NodeFacts["kubeProxyMetrics"]> {
  return {
    metrics: Object.fromEntries(
      Object.entries(values).map(([k, v]) => [k, { type: null, value: v, series: 1, min: v, max: v }]),
    ),
    gitVersion,
    familyCount: Object.keys(values).length,
  };
}

export function vs(
  address: string,
  port: number,
  extra: Partial<NonNullable<NodeFacts["ipvs"]>["virtualServers"][number]> = {},
) {
  return {
    protocol: "TCP" as const,
    family: address.includes(":") ? ("inet6" as const) : ("inet" as const),
    address,
    port,
    fwmark: null,
    scheduler: "rr",
    flags: [],
    persistentTimeoutJiffies: null,
    realServers: 1,
    activeConns: 0,
    inactiveConns: 0,
    ...extra,
  };
}

type Backend = NonNullable<NodeFacts["iptables"]>["backends"][number];

/** One iptables backend's facts, readable and empty but for what a test sets. */
export function iptablesBackend(over: Partial<Extract<Backend, { read: true }>> = {}): Backend {
  return {
    backend: "nft",
    family: "ipv4",
    read: true,
    totalRules: 0,
    kubeChains: [],
    patternCounts: {},
    foreignJumps: [],
    policies: {},
    nodePortAccepts: [],
    firewallChains: {},
    // As this agent's parser always writes them (an older agent's report lacks them: tests say so).
    forwardJumps: [],
    ipvsMatches: [],
    ...over,
  };
}
