import { forwardDropAfterSwitch } from "./after/forward-drop-after-switch.js";
import { ipvsChainsLeft } from "./after/ipvs-iptables-chains-left.js";
import { ipvsLeft } from "./after/ipvs-virtual-servers-left.js";
import { ipsetsLeft } from "./after/kube-ipsets-left.js";
import { kubeIpvs0Left } from "./after/kube-ipvs0.js";
import { localhostNodePortsRejected } from "./after/localhost-nodeports-rejected.js";
import { nftablesTableMissing } from "./after/nftables-table-missing.js";
import { serviceEndpointsDiffer } from "./after/service-endpoints-differ-after-switch.js";
import { servicesLostInSwitch } from "./after/services-lost-in-switch.js";
import { strictArpLeft } from "./after/strict-arp-sysctls-left.js";
import { deprecationStage } from "./any/ipvs-mode-deprecated.js";
import { cleanupFailing } from "./any/kube-proxy-cleanup-failing.js";
import { kubeProxyFree } from "./any/kube-proxy-free.js";
import { kubeProxyUnhealthy } from "./any/kube-proxy-health.js";
import { kubeProxyNotAnswering } from "./any/kube-proxy-not-answering.js";
import { rulesStale } from "./any/kube-proxy-rules-stale.js";
import { syncFailing } from "./any/kube-proxy-sync-failing.js";
import { rollbackLeftovers } from "./any/nftables-state-after-rollback.js";
import { otherServiceProxyIpvs } from "./any/other-service-proxy-ipvs.js";
import { scanIncomplete } from "./any/scan-incomplete.js";
import { conntrackWorkaround } from "./before/conntrack-workaround-relied-on.js";
import { etpLocalInClusterCallers } from "./before/etp-local-in-cluster-callers.js";
import { etpLocalWithoutEndpoints } from "./before/etp-local-without-local-endpoints.js";
import { foreignIpvsUsers } from "./before/foreign-ipvs-virtual-servers.js";
import { foreignChainReferences } from "./before/foreign-rules-reference-kube-chains.js";
import { forwardDropAtSwitch } from "./before/forward-drop-at-switch.js";
import { healthCheckNodePortsShrink } from "./before/health-check-nodeports-shrink.js";
import { hostFirewall } from "./before/host-firewall-needs-nodeport-range.js";
import { ipForwardNotPersistent } from "./before/ip-forward-not-persistent.js";
import { ipvsConnectionsCut } from "./before/ipvs-connections-cut-at-switch.js";
import { ipvsMatchRules } from "./before/ipvs-match-rules-stop-applying.js";
import { ipRulesOnServiceAddresses } from "./before/ip-rules-keyed-on-service-addresses.js";
import { ipvsScheduler } from "./before/ipvs-scheduler-not-rr.js";
import { ipvsSessionAffinity } from "./before/ipvs-session-affinity-per-virtual-server.js";
import { ipvsTimeouts } from "./before/ipvs-timeouts-set.js";
import { kernelTooOld } from "./before/kernel-too-old-for-nftables.js";
import { localhostNodePorts } from "./before/localhost-nodeports-in-use.js";
import { localhostNodePortsNotMeasurable } from "./before/localhost-nodeports-not-measurable.js";
import { nftTooNewForKubeProxy } from "./before/nft-host-newer-than-kube-proxy-supports.js";
import { nftTooOld } from "./before/nft-too-old.js";
import { nftModulesMissing } from "./before/nftables-modules-missing.js";
import { nodePortsOnSecondaryAddresses } from "./before/nodeport-addresses-shrink.js";
import { serviceIpsAnsweredByArp } from "./before/service-ips-answered-by-arp.js";
import { serviceIpsHostPortsClose } from "./before/service-ips-host-ports-close.js";
import type { FindingSpec, Rule, Tag } from "./rule.js";
import type { NodeFacts } from "../report/schema.js";

// Every rule, registered in one place; each is pure, small and in its own file. Every id list below is
// derived from what the rules declare. Whether the mode is pinned, and whether the ConfigMap agrees with
// what runs, are cluster checks: /configz is already defaulted and merged with flags
// (cmd/kube-proxy/app/server_linux.go), so a node cannot see an empty mode: or a drifted ConfigMap.
export const RULES = [
  kernelTooOld,
  nftTooOld,
  nftTooNewForKubeProxy,
  nftModulesMissing,
  foreignIpvsUsers,
  nodePortsOnSecondaryAddresses,
  localhostNodePorts,
  localhostNodePortsNotMeasurable,
  conntrackWorkaround,
  hostFirewall,
  forwardDropAtSwitch,
  ipvsMatchRules,
  ipRulesOnServiceAddresses,
  foreignChainReferences,
  ipvsScheduler,
  ipvsSessionAffinity,
  ipvsTimeouts,
  ipvsConnectionsCut,
  ipForwardNotPersistent,
  etpLocalWithoutEndpoints,
  etpLocalInClusterCallers,
  serviceIpsAnsweredByArp,
  serviceIpsHostPortsClose,
  healthCheckNodePortsShrink,
  kubeIpvs0Left,
  ipvsLeft,
  ipsetsLeft,
  ipvsChainsLeft,
  strictArpLeft,
  nftablesTableMissing,
  forwardDropAfterSwitch,
  localhostNodePortsRejected,
  servicesLostInSwitch,
  serviceEndpointsDiffer,
  syncFailing,
  cleanupFailing,
  rulesStale,
  kubeProxyNotAnswering,
  kubeProxyUnhealthy,
  deprecationStage,
  kubeProxyFree,
  otherServiceProxyIpvs,
  rollbackLeftovers,
  scanIncomplete,
] as const;

type IdsOf<R> = R extends Rule<infer Id> ? Id : never;
/** Every finding id the agent can raise. */
export type FindingId = IdsOf<(typeof RULES)[number]>;

export const FINDINGS: ReadonlyMap<FindingId, FindingSpec> = new Map(
  (RULES as readonly Rule<FindingId>[]).flatMap(
    (r) => Object.entries(r.findings) as [FindingId, FindingSpec][],
  ),
);

export const FINDING_IDS: readonly FindingId[] = [...FINDINGS.keys()];

/** The facts each finding's rule reads: with one of them unread, the finding's absence proves nothing. */
export const FINDING_NEEDS: ReadonlyMap<FindingId, readonly (keyof NodeFacts)[]> = new Map(
  (RULES as readonly Rule<FindingId>[]).flatMap((r) =>
    (Object.keys(r.findings) as FindingId[]).map((id) => [id, r.needs] as const),
  ),
);

function tagged(tag: Tag): ReadonlySet<string> {
  return new Set([...FINDINGS].filter(([, s]) => s.tags?.includes(tag)).map(([id]) => id));
}

/** State ipvs mode left behind: the verdict after the switch is "leftovers". */
export const LEFTOVER_IDS = tagged("leftover");
/** What the fleet plan measures before switching a pool. */
export const MEASURE_IDS = tagged("measure-before-switch");
/** What the fleet plan changes in the configuration after the switch. */
export const AFTER_CONFIG_IDS = tagged("config-after-switch");
/** Why a node should move, never something in its way. */
export const WHY_MOVE_IDS = tagged("why-move");
/** A hole in the scan. */
export const SCAN_INCOMPLETE_IDS = tagged("scan-incomplete");
