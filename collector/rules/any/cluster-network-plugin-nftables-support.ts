import {
  PLUGIN_NAMES,
  compatRow,
  pluginImage,
  type CompatRow,
  type Plugin,
  type PluginImage,
} from "../../checks/cni-compatibility.js";
import { CONFIG_SOURCE_NEEDS, configSource } from "../../checks/config-source.js";
import { DAEMONSETS_GAP, type ApiDaemonSet } from "../../report/cluster-facts.js";
import { rule, type RuleFinding, type Stage } from "../rule.js";

interface Seen {
  ds: ApiDaemonSet;
  img: PluginImage;
  row: CompatRow | null;
  /** kube-router with its own IPVS service proxy (--run-service-proxy, on unless passed false). */
  ownProxy: boolean;
}

const rank = (s: Seen): number =>
  s.row?.support === "breaks" ? 3 : s.row?.support === "works" && !s.ownProxy ? 0 : 1;

function line(s: Seen): string {
  const who = `${s.ds.namespace}/${s.ds.name}: ${s.img.image}`;
  const name = `${PLUGIN_NAMES[s.img.plugin]} ${s.img.version ?? `(version not known from tag ${s.img.tag ?? "none"})`}`;
  const proxy = s.ownProxy
    ? "; kube-router runs its own IPVS service proxy here (--run-service-proxy, on by default): it, not kube-proxy, serves Services it programs, and the ipvs deprecation concerns it only as kube-proxy's neighbour"
    : "";
  const judged = s.row
    ? `${s.row.support}: ${s.row.says} (source: ${s.row.source})`
    : "version not known: cannot be read against the table";
  return `${who} -> ${name}: ${judged}${proxy}`;
}

/** What to do, per plugin: the version that fixes a break, or the setting that must move with kube-proxy. */
const FIX: Record<Plugin, string> = {
  calico:
    "Calico: upgrade calico-node to v3.29.0 or later and set FelixConfiguration nftablesMode (Enabled; Auto from v3.32.0, which follows kube-proxy node by node) in the same change as kube-proxy's mode",
  cilium:
    "Cilium: with kubeProxyReplacement kube-proxy is not needed at all; otherwise switch one canary node and test Services and NetworkPolicy there first",
  flannel:
    'Flannel: from v0.25.0, set "EnableNFTables": true in net-conf.json (ConfigMap kube-flannel-cfg) with the switch; test on a canary node (experimental)',
  "kube-router":
    "kube-router: test on a canary node; with --run-service-proxy it is a second service proxy beside kube-proxy: keep one of them",
  "aws-vpc-cni": "Amazon VPC CNI: upgrade to v1.13.2 or later (the EKS add-on's current version is)",
  "azure-cni": "Azure CNI: switch one canary node pool (az aks nodepool) and test Services there first",
};

const ID = "cluster-network-plugin-nftables-support" as const;
type Out = RuleFinding<typeof ID>;

/**
 * The network plugin must work beside kube-proxy in nftables mode: read from the DaemonSets' images
 * against one table with a source per row (checks/cni-compatibility.ts). Before the switch a plugin
 * version known to break blocks it; after the switch (or on a node already switched) the same plugin
 * is breaking the nodes now, so it stays an error, stage after.
 */
export const networkPluginNftables = rule({
  findings: {
    [ID]: {
      severity: ["warning", "error"],
      stage: ["before", "after"],
    },
  },
  needs: ["daemonSets", ...CONFIG_SOURCE_NEEDS, "observed"],
  evaluate({ facts, observed }) {
    const src = configSource(facts, observed);
    // No kube-proxy anywhere (kubeProxyReplacement, Calico eBPF): there is no switch to judge.
    if (src.kind === "none") return [];
    const after = src.mode === "nftables" || observed.some((o) => o.phase === "nftables");
    const stage = after ? ("after" as const) : ("before" as const);
    const list = facts.daemonSets;
    if (list === null) return [notRead(stage, facts.gaps.find((g) => g.what === DAEMONSETS_GAP)?.reason)];
    const seen = pluginsIn(list.items);
    if (seen.length === 0) return list.more ? [noneKnown(stage, list.items.length)] : [];
    const worst = Math.max(...seen.map(rank));
    if (worst === 0) return [];
    return [judged(seen, worst, after, stage, list.more)];
  },
});

/** Each DaemonSet whose images name a known network plugin, with the table's row for its version. */
function pluginsIn(items: ApiDaemonSet[]): Seen[] {
  return items.flatMap((ds) => {
    const img = ds.images.map(pluginImage).find((i) => i !== null);
    if (!img) return [];
    return [
      {
        ds,
        img,
        row: compatRow(img.plugin, img.version),
        ownProxy: img.plugin === "kube-router" && ds.runServiceProxy !== false,
      },
    ];
  });
}

function notRead(stage: Stage, reason: string | undefined): Out {
  return {
    id: ID,
    severity: "warning",
    stage,
    blocksMigration: false,
    title: "DaemonSets not read: the network plugin could not be checked against kube-proxy's nftables mode",
    evidence: { reason: reason ?? "not read by the collector that gathered these facts" },
    remedy:
      "Grant the collector list on daemonsets (API group apps, cluster-wide: the ClusterRole proxyscope-collector in manifests/core/collector-rbac.yaml), or check your network plugin's version against docs/findings/cluster-network-plugin-nftables-support.md by hand",
  };
}

function noneKnown(stage: Stage, read: number): Out {
  return {
    id: ID,
    severity: "warning",
    stage,
    blocksMigration: false,
    title: `No known network plugin among the ${read} DaemonSets read, but not all DaemonSets were read`,
    evidence: { read, more: true },
    remedy:
      "Check your network plugin's version against docs/findings/cluster-network-plugin-nftables-support.md by hand",
  };
}

/** The plugins at the worst rank named: a known break is an error that blocks; the rest a warning. */
function judged(seen: Seen[], worst: number, after: boolean, stage: Stage, more: boolean): Out {
  const named = seen.filter((s) => rank(s) === worst);
  const what = named.map((s) => `${PLUGIN_NAMES[s.img.plugin]} ${s.img.version ?? "(version not known)"}`);
  const breaks = worst === 3;
  const plugins = [...new Set(named.map((s) => s.img.plugin))];
  return {
    id: ID,
    severity: breaks ? "error" : "warning",
    stage,
    blocksMigration: breaks,
    title: breaks
      ? after
        ? `${what.join(", ")} is known to break beside kube-proxy in nftables mode, which this cluster runs`
        : `${what.join(", ")} is known to break beside kube-proxy in nftables mode: upgrade it before the switch`
      : `${what.join(", ")}: support for kube-proxy's nftables mode is not known, or needs the plugin's own setting`,
    evidence: {
      plugins: seen.sort((a, b) => rank(b) - rank(a)).map(line),
      ...(more ? { more: true } : {}),
    },
    remedy: plugins.map((p) => FIX[p]).join("; "),
  };
}
