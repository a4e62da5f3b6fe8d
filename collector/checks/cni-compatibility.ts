// Which network plugin versions work beside kube-proxy in nftables mode: the one table the check
// `cluster-network-plugin-nftables-support` reads, and docs/findings/ prints. Every row names its source;
// where none was found the row says "unknown", never a guessed version boundary.

export const PLUGINS = ["calico", "cilium", "flannel", "kube-router", "aws-vpc-cni", "azure-cni"] as const;
export type Plugin = (typeof PLUGINS)[number];

/**
 * breaks: known to break (or unable to run) beside kube-proxy in nftables mode — blocks the switch.
 * needs-config: supported, but only when the plugin's own setting moves with kube-proxy.
 * unknown: nothing found that says either way.
 * works: its project says it works.
 */
type Support = "breaks" | "needs-config" | "unknown" | "works";

export interface CompatRow {
  plugin: Plugin;
  /** First version the row covers (inclusive); null: from the first release. */
  from: string | null;
  /** First version the row no longer covers (exclusive); null: to the latest. */
  until: string | null;
  support: Support;
  /** What the source says, in a sentence the finding quotes. */
  says: string;
  /** Where it says so: issue, pull request, release note or document, with its version. */
  source: string;
}

export const PLUGIN_NAMES: Record<Plugin, string> = {
  calico: "Calico",
  cilium: "Cilium",
  flannel: "Flannel",
  "kube-router": "kube-router",
  "aws-vpc-cni": "Amazon VPC CNI",
  "azure-cni": "Azure CNI",
};

export const CNI_COMPATIBILITY: readonly CompatRow[] = [
  {
    plugin: "calico",
    from: null,
    until: "v3.29.0",
    support: "breaks",
    says: "Felix panics when kube-proxy writes native nftables rules beside its iptables data plane; Calico has no nftables data plane before v3.29.0",
    source:
      "projectcalico/calico#8025 (Calico panics if kube-proxy using nftables mode); known issue in the Calico 3.27 release notes (tigera/docs#1249); nftables data plane first in v3.29.0 (projectcalico/calico#8780, release-notes/v3.29.0-release-notes.md)",
  },
  {
    plugin: "calico",
    from: "v3.29.0",
    until: "v3.32.0",
    support: "needs-config",
    says: "works only with Calico's own nftables data plane (FelixConfiguration nftablesMode: Enabled; tech preview in v3.29, GA in v3.31.0), switched together with kube-proxy; its iptables data plane beside nftables kube-proxy is still the calico#8025 case",
    source:
      "projectcalico/calico#8780 (v3.29.0 release notes: tech-preview nftables data plane and nftables kube-proxy compatibility); release-notes/v3.31.0-release-notes.md (nftables data plane GA); docs.tigera.io/calico/latest/getting-started/kubernetes/nftables (kube-proxy must also be in nftables mode); kubernetes-sigs/kubespray#12198 (nftables kube-proxy breaks Calico unless Calico's nftables mode is on too, citing calico#8025)",
  },
  {
    plugin: "calico",
    from: "v3.32.0",
    until: null,
    support: "needs-config",
    says: "Felix follows kube-proxy's mode on each node when nftablesMode is Auto (the Tigera operator sets Auto); nftablesMode: Disabled still runs the iptables data plane beside nftables kube-proxy",
    source:
      "projectcalico/calico#11629 (v3.32.0 release notes: auto-detection of nftables or iptables from kube-proxy); tigera/operator#4389 (nftablesMode=Auto in the operator's FelixConfiguration)",
  },
  {
    plugin: "cilium",
    from: null,
    until: null,
    support: "unknown",
    says: "nothing found on Cilium beside kube-proxy in nftables mode; with kubeProxyReplacement there is no kube-proxy and the switch does not concern the cluster",
    source: "none found (searched cilium/cilium issues and docs.cilium.io kube-proxy interoperability)",
  },
  {
    plugin: "flannel",
    from: null,
    until: "v0.25.0",
    support: "unknown",
    says: "iptables only (no nftables support before v0.25.0); nothing found on it beside kube-proxy in nftables mode",
    source:
      "flannel-io/flannel commit f244861a (nftables masquerading, first tagged v0.25.0); no statement found on older versions",
  },
  {
    plugin: "flannel",
    from: "v0.25.0",
    until: null,
    support: "needs-config",
    says: "EnableNFTables: true in net-conf.json (experimental) makes flannel use nftables; its documentation pairs that with kube-proxy in nftables mode",
    source:
      "flannel-io/flannel Documentation/configuration.md, section nftables mode (since v0.25.0); kubernetes-sigs/kubespray#13291 sets EnableNFTables with kube-proxy nftables mode",
  },
  {
    plugin: "kube-router",
    from: null,
    until: null,
    support: "unknown",
    says: "kube-router programs iptables/ipset and IPVS and does not support nftables (kube-router#1175); nothing documents it beside kube-proxy in nftables mode, and native nftables rules in the standard filter table have crashed its policy controller (kube-router#1777)",
    source:
      "cloudnativelabs/kube-router#1175 (no nftables support planned), cloudnativelabs/kube-router#1777",
  },
  {
    plugin: "aws-vpc-cni",
    from: null,
    until: "v1.13.2",
    support: "unknown",
    says: "chooses its iptables backend from ENABLE_NFTABLES (v1.12.1) or uses iptables-legacy (before v1.12.1), not from the node; nothing found on these versions beside kube-proxy in nftables mode",
    source:
      "aws/amazon-vpc-cni-k8s README, ENABLE_NFTABLES (introduced in v1.12.1, deprecated in v1.13.2); aws/amazon-vpc-cni-k8s#2155",
  },
  {
    plugin: "aws-vpc-cni",
    from: "v1.13.2",
    until: null,
    support: "works",
    says: "follows the node's iptables backend (iptables-wrapper), and its maintainers answer that kube-proxy's nftables mode is supported",
    source:
      "aws/amazon-vpc-cni-k8s#2402 (iptables mode set automatically, ENABLE_NFTABLES deprecated); aws/amazon-vpc-cni-k8s#3226 (maintainer: supported, citing #2402)",
  },
  {
    plugin: "azure-cni",
    from: null,
    until: null,
    support: "unknown",
    says: "no Azure CNI version is documented for it; AKS offers kube-proxy's nftables mode on Kubernetes 1.33+ (preview) without naming CNI versions",
    source: "learn.microsoft.com/azure/aks/configure-kube-proxy (nftables mode, preview; Kubernetes >= 1.33)",
  },
];

/**
 * Images by the last segment of their repository path (registry and mirrors vary; the name does not):
 * calico/node (Docker Hub, quay.io), cilium/cilium, flannel-io/flannel and the older flannel/flannel,
 * coreos/flannel and rancher/mirrored-flannelcni-flannel, cloudnativelabs/kube-router, the ECR
 * amazon-k8s-cni, and AKS's mcr.microsoft.com/containernetworking/azure-cns and azure-cni.
 */
const IMAGE_NAMES: readonly { plugin: Plugin; last: readonly string[]; parent?: readonly string[] }[] = [
  { plugin: "calico", last: ["node"], parent: ["calico"] },
  { plugin: "cilium", last: ["cilium"], parent: ["cilium"] },
  { plugin: "flannel", last: ["flannel", "mirrored-flannelcni-flannel"] },
  { plugin: "kube-router", last: ["kube-router"] },
  { plugin: "aws-vpc-cni", last: ["amazon-k8s-cni"] },
  { plugin: "azure-cni", last: ["azure-cns", "azure-cni"] },
];

export interface PluginImage {
  plugin: Plugin;
  image: string;
  /** The tag as written (`v3.27.0`, `v1.18.1-eksbuild.1`); null for a digest-only or untagged image. */
  tag: string | null;
  /** `vMAJOR.MINOR.PATCH` read from the tag; null when the tag names no such version. */
  version: string | null;
}

/** Which plugin an image is, from its repository path; null for any other image. */
export function pluginImage(image: string): PluginImage | null {
  const noDigest = image.split("@")[0] ?? "";
  const slash = noDigest.lastIndexOf("/");
  const colon = noDigest.lastIndexOf(":");
  const tagged = colon > slash;
  const repo = tagged ? noDigest.slice(0, colon) : noDigest;
  const tag = tagged ? noDigest.slice(colon + 1) : null;
  const parts = repo.toLowerCase().split("/");
  const last = parts.at(-1) ?? "";
  const parent = parts.at(-2) ?? "";
  const hit = IMAGE_NAMES.find((n) => n.last.includes(last) && (!n.parent || n.parent.includes(parent)));
  if (!hit) return null;
  return { plugin: hit.plugin, image, tag, version: tag === null ? null : versionOfTag(tag) };
}

/** `v3.27.0`, `3.27.0`, `v1.18.1-eksbuild.1`, `v0.24.2-rancher1` -> `v3.27.0` ...; anything else null. */
export function versionOfTag(tag: string): string | null {
  const m = /^v?(\d{1,4})\.(\d{1,4})\.(\d{1,4})(?:[-+._].*)?$/.exec(tag);
  return m ? `v${Number(m[1])}.${Number(m[2])}.${Number(m[3])}` : null;
}

function parts(v: string): [number, number, number] {
  const m = /^v(\d+)\.(\d+)\.(\d+)$/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
}

function compareVersions(a: string, b: string): number {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}

/** The row covering this plugin at this version; null when the version is not known. */
export function compatRow(plugin: Plugin, version: string | null): CompatRow | null {
  const rows = CNI_COMPATIBILITY.filter((r) => r.plugin === plugin);
  // A plugin with one row for every version is judged without its version.
  if (version === null) {
    const [only] = rows;
    return rows.length === 1 && only && only.from === null && only.until === null ? only : null;
  }
  return (
    rows.find(
      (r) =>
        (r.from === null || compareVersions(version, r.from) >= 0) &&
        (r.until === null || compareVersions(version, r.until) < 0),
    ) ?? null
  );
}
