import type { ProbeError } from "../facts/probe-error.js";
import { kernelCanRunNftables, nftNewEnough } from "../parse/versions.js";
import type { IpvsPlane, NodeFacts, NodePortReach, Phase } from "../report/schema.js";
import {
  CLEANUP_FAILURE_COUNTER,
  counterSum,
  LAST_SYNC,
  SYNC_FAILURE_COUNTERS,
  timestamp,
} from "./counters.js";
import type { RuleOptions } from "./options.js";
import { notCounted, type NotCounted } from "./not-counted.js";
import { kubeProxyChains, kubeProxyIpsets, type BackendChains } from "./owned.js";
import { otherServiceProxy, type OtherServiceProxy } from "./other-proxy.js";
import { answeredMode, decidePhase, type PhaseDecision } from "./phase.js";
import { kubeIpvs0ServiceIps } from "./kube-ipvs0.js";
import { ipvsPlane } from "./ipvs-plane.js";
import { nodePortReach } from "./nodeport-reach.js";
import { classifyVirtualServers, type VirtualServerClasses } from "./virtual-servers.js";
import { kubeProxyIpvsConnections } from "./ipvs-connections.js";
import type { KubeProxyIpvsConnections } from "../facts/ipvs-connections.js";

/**
 * What the facts mean, derived once per report: rules, metrics, the text report, verify and the collector
 * read this instead of deriving it again. null always means "not read", never "none".
 */
export interface NodeView extends PhaseDecision {
  /** kube-proxy's own answer on /proxyMode, trimmed; null when it did not answer. */
  answeredMode: string | null;
  /** The same, null also when it answered nothing: the mode known to run (else the phase is inferred). */
  runningMode: string | null;
  kernelNftablesCapable: boolean | null;
  /** Host nft is 1.0.1 or newer; null when its version is unknown. */
  hostNftNewEnough: boolean | null;
  /**
   * kube-ipvs0 addresses with no IPVS virtual server behind them, whatever the phase — kube-proxy gone,
   * silent or in another mode — except while kube-proxy itself answers ipvs (a sync in flight leaves that
   * gap for a moment; a sync that stays behind is kube-proxy-rules-stale); null unless both were read.
   */
  blackHoled: string[] | null;
  kubeProxyIpsets: NonNullable<NodeFacts["ipsets"]>["sets"] | null;
  kubeProxyChains: BackendChains[] | null;
  /**
   * Another service proxy programming IPVS here (kube-router's --run-service-proxy): "absent" when what
   * was read rules it out, null when a part it would show was not read (then nothing is taken for it).
   */
  otherServiceProxy: OtherServiceProxy | "absent" | null;
  /** The IPVS table split by owner: Service IPs, NodePorts (the node's NodePort set), the other proxy's, foreign ones. */
  virtualServers: VirtualServerClasses;
  /** kube-proxy's sync and cleanup failure counters for its mode, summed; null when unknowable. */
  syncFailures: number | null;
  cleanupFailures: number | null;
  /** kube-proxy's last successful sync (oldest IP family), seconds since the epoch. */
  lastSync: number | null;
  /** What a check saw and did not count, with why (a CNI's addresses, Docker's FORWARD DROP, ...). */
  notCounted: NotCounted[];
  /** Per node address, whether kube-proxy's running mode's rules accept NodePorts there (verify reads it). */
  nodePortReach: NodePortReach;
  /** ipvs mode's data plane from the whole IPVS table (a rollback's verify); null when not read. */
  ipvsPlane: IpvsPlane | null;
  /** IPVS connections through kube-proxy's virtual servers (cut by the switch); null when not read. */
  ipvsConnections: KubeProxyIpvsConnections | null;
}

export function buildView(
  facts: NodeFacts,
  failedProbes: ReadonlyMap<string, ProbeError>,
  opts: RuleOptions,
): NodeView {
  const answered = answeredMode(facts);
  const runningMode = answered || null;
  const other = otherServiceProxy(facts, opts);
  const othersVs = other === null || other === "absent" ? [] : other.virtualServers;
  const decision = decidePhase(facts, failedProbes, runningMode, othersVs);
  const virtualServers = classifyVirtualServers(facts, opts, othersVs);
  return {
    ...decision,
    answeredMode: answered,
    runningMode,
    kernelNftablesCapable: facts.kernel ? kernelCanRunNftables(facts.kernel) : null,
    hostNftNewEnough: nftNewEnough(facts.nftVersion?.version),
    blackHoled: blackHoled(facts, runningMode === "ipvs"),
    kubeProxyIpsets: kubeProxyIpsets(facts),
    kubeProxyChains: kubeProxyChains(facts),
    otherServiceProxy: other,
    virtualServers,
    syncFailures: counterSum(facts, runningMode, SYNC_FAILURE_COUNTERS),
    cleanupFailures: counterSum(facts, runningMode, [CLEANUP_FAILURE_COUNTER]),
    lastSync: timestamp(facts, LAST_SYNC, "oldest"),
    // The checks that filter these run before the switch only (ipvs, iptables).
    notCounted:
      decision.phase === "ipvs" || decision.phase === "iptables"
        ? notCounted(facts, virtualServers.nodePorts)
        : [],
    nodePortReach: nodePortReach(facts, runningMode, virtualServers.nodePorts),
    ipvsPlane: ipvsPlane(facts),
    ipvsConnections: kubeProxyIpvsConnections(facts, virtualServers),
  };
}

/** Phases in which ipvs mode's state can only be left over: kube-proxy runs another mode, or none. */
export const LEFT_BEHIND: ReadonlySet<Phase> = new Set(["nftables", "iptables", "none"]);

// Without the IPVS table nobody can tell which addresses are backed: say "left", never "black hole".
function blackHoled(f: NodeFacts, ipvsAnswered: boolean): string[] | null {
  if (!f.kubeIpvs0 || !f.ipvs) return null;
  if (!f.kubeIpvs0.present || ipvsAnswered) return [];
  const backed = new Set(f.ipvs.virtualServers.map((v) => v.address));
  return kubeIpvs0ServiceIps(f.kubeIpvs0).filter((a) => !backed.has(a));
}
