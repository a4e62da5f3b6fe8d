import { compareVersions, versionParts } from "../../parse/versions.js";
import { rule } from "../rule.js";

// First patch release of each minor carrying "Fix kube-proxy on systems with nft 1.1.3" (kubernetes/kubernetes
// #137501, cherry-picked as #137809 to 1.33.11, #137808 to 1.34.7, #137807 to 1.35.4; in 1.36.0). Minors
// before 1.33 never got it.
const NFT_113_FIXED_IN: Record<number, number> = { 33: 11, 34: 7, 35: 4 };

export function kubeProxyHasNft113Fix(version: number[]): boolean {
  const [major, minor, patch] = version as [number, number, number];
  if (major !== 1) return major > 1;
  if (minor >= 36) return true;
  const fixed = NFT_113_FIXED_IN[minor];
  return fixed !== undefined && patch >= fixed;
}

export const nftTooNewForKubeProxy = rule({
  findings: {
    // Before the switch it blocks it; on a node already in nftables mode the syncs crash.
    "nft-host-newer-than-kube-proxy-supports": { severity: ["error", "critical"], stage: ["before", "any"] },
  },
  needs: ["nftVersion", "kubeProxyMetrics"],
  evaluate({ facts, view: { phase } }) {
    const host = versionParts(facts.nftVersion?.version);
    const kp = versionParts(facts.kubeProxyMetrics?.gitVersion);
    if (!host || !kp || phase === "none") return [];
    if (compareVersions(host, [1, 1, 3]) < 0 || kubeProxyHasNft113Fix(kp)) return [];
    const after = phase === "nftables";
    return [
      {
        id: "nft-host-newer-than-kube-proxy-supports",
        severity: after ? "critical" : "error",
        stage: after ? "any" : "before",
        blocksMigration: !after,
        title: `Host nft ${facts.nftVersion?.version} with kube-proxy ${facts.kubeProxyMetrics?.gitVersion}: nftables-mode syncs crash on this combination`,
        evidence: {
          nftVersion: facts.nftVersion?.version ?? null,
          kubeProxyVersion: facts.kubeProxyMetrics?.gitVersion ?? null,
          fixedIn: "v1.33.11, v1.34.7, v1.35.4, v1.36.0",
        },
        remedy:
          "Upgrade kube-proxy to a release with the fix (kubernetes/kubernetes#137501) before switching this node to nftables mode",
      },
    ];
  },
});
