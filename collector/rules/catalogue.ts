import { ipvsBlockLeft } from "./after/cluster-ipvs-config-left.js";
import { localhostNodePortsHalfConfigured } from "./after/cluster-localhost-nodeports-half-configured.js";
import { configKeysNotCarried } from "./any/cluster-config-keys-not-carried.js";
import { configSourceRule } from "./any/cluster-config-source.js";
import { configSourcesDisagree } from "./any/cluster-config-sources-disagree.js";
import { configMapNotMounted } from "./any/cluster-configmap-not-mounted.js";
import { configMapNotUsed } from "./any/cluster-configmap-not-used.js";
import { deprecationStageRule } from "./any/cluster-deprecation-stage.js";
import { configUnreadable } from "./any/cluster-kube-proxy-config-unreadable.js";
import { ipvsGateUseless } from "./any/cluster-kube-proxy-ipvs-gate-useless.js";
import { kubeadmRevertsConfigMap } from "./any/cluster-kubeadm-reverts-configmap.js";
import { networkPluginNftables } from "./any/cluster-network-plugin-nftables-support.js";
import { noKubeProxy } from "./any/cluster-no-kube-proxy.js";
import { nodesDisagreeWithConfig } from "./any/cluster-nodes-disagree-with-config.js";
import { modeNotPinned } from "./any/cluster-proxy-mode-not-pinned.js";
import { targetVersionRule } from "./any/cluster-target-version.js";
import { gateKubeProxyIpvs } from "./before/cluster-gate-kube-proxy-ipvs.js";
import { ipvsConfigured } from "./before/cluster-ipvs-mode-configured.js";
import { kernelsTooOld } from "./before/cluster-kernels-too-old-for-nftables.js";
import { rolloutWide } from "./before/cluster-kube-proxy-rollout-wide.js";
import { nodePortInventory } from "./before/cluster-nodeport-inventory.js";
import { servicesEtpLocal } from "./before/cluster-services-etp-local.js";
import { sessionAffinity } from "./before/cluster-services-session-affinity.js";
import type { ClusterFindingSpec, ClusterNeed, ClusterRule, ClusterTag, FlagNeed, FlagRule } from "./rule.js";

// Every cluster check, registered in one place; each is pure, small and in its own file, and every id
// list below is derived from what they declare. The order is the report's among findings of one
// severity (they are sorted worst first, stably), so it is part of the wire format.
export const CLUSTER_RULES = [
  noKubeProxy,
  configSourceRule,
  modeNotPinned,
  ipvsConfigured,
  ipvsBlockLeft,
  configKeysNotCarried,
  gateKubeProxyIpvs,
  localhostNodePortsHalfConfigured,
  configSourcesDisagree,
  configMapNotUsed,
  configMapNotMounted,
  nodesDisagreeWithConfig,
  configUnreadable,
  kubeadmRevertsConfigMap,
  rolloutWide,
  kernelsTooOld,
  networkPluginNftables,
  sessionAffinity,
  nodePortInventory,
  servicesEtpLocal,
  deprecationStageRule,
  ipvsGateUseless,
] as const;

/** Checks a flag asks for; their findings follow the others in the report, in this order. */
export const FLAG_RULES = [targetVersionRule] as const;

type IdsOf<R> = R extends ClusterRule<infer Id> | FlagRule<infer Id> ? Id : never;
/** Every finding id the collector can raise about the cluster. */
export type ClusterFindingId = IdsOf<(typeof CLUSTER_RULES)[number] | (typeof FLAG_RULES)[number]>;

type AnyRule = {
  findings: Readonly<Record<string, ClusterFindingSpec>>;
  needs: readonly (ClusterNeed | FlagNeed)[];
};
const ALL: readonly AnyRule[] = [...CLUSTER_RULES, ...FLAG_RULES];

export const CLUSTER_FINDINGS: ReadonlyMap<ClusterFindingId, ClusterFindingSpec> = new Map(
  ALL.flatMap((r) => Object.entries(r.findings) as [ClusterFindingId, ClusterFindingSpec][]),
);

export const CLUSTER_FINDING_IDS: readonly ClusterFindingId[] = [...CLUSTER_FINDINGS.keys()];

function tagged(tag: ClusterTag): ReadonlySet<ClusterFindingId> {
  return new Set([...CLUSTER_FINDINGS].filter(([, s]) => s.tags?.includes(tag)).map(([id]) => id));
}

/** ipvs configuration left in kube-proxy's config: the fleet plan's last step removes it. */
export const CLUSTER_AFTER_CONFIG_IDS = tagged("config-after-switch");
