import {
  KUBE_PROXY_NFT_IMAGE_FIXED,
  kubeProxyNftUdataFix,
  NFT_WRITES_SET_UDATA,
  nftWritesSetUdata,
  versionParts,
} from "../../parse/versions.js";
import type { KubeProxyNftFacts } from "../../facts/kube-proxy-nft.js";
import type { ProbeError } from "../../facts/probe-error.js";
import { rule } from "../rule.js";

// What is known (test/profiles/profiles.md, "#12 points 9 and 11"): a set anywhere in the host netns written
// by nft 1.1.2+ carries user data the older nft inside kube-proxy's image segfaults on (microsoft/azurelinux
// #17760; kubernetes/kubernetes#136786). #137501 (1.33.11 / 1.34.7 / 1.35.4 / 1.36.0) made kube-proxy list
// only its own table, which stopped the listing crash but not the sync's (#136786 reopened 2026-05-18;
// #140898 on v1.36.0-eksbuild.9). #140405 rebuilt the image with nft 1.0.6.1, from v1.37.0 only. The host's
// nft is what writes such sets on most nodes; a host with no nft (Bottlerocket) is not this finding.
// The same crash seen on this node: nft 1.0.6 segfaults in any listing that loads a set nft 1.1.2+ created
// with a `type` declaration (test/kernel/nft11-sets-netns.test.ts, on real kernel state). The agent's image
// carries the nft of kube-proxy's image (bookworm's 1.0.6, what registry.k8s.io/build-image/distroless-iptables
// carries before #140405) as a witness apart from its own (trixie's 1.1.3, which reads such sets): its set
// listing dying by SIGSEGV is the state kube-proxy's nft crashes on, even where the host's nft package is
// older (a container's nft in the host netns wrote the sets, as in #136786's reproducer). An agent whose
// own nft is that old (a host binary on a bookworm host) sees the same in its own failed set read. Other
// failures (a timeout, a missing witness) say nothing about the sets.
function witnessCrash(w: KubeProxyNftFacts | null): string | null {
  if (w?.outcome !== "crashed" || w.signal !== "SIGSEGV") return null;
  const version = w.version === null ? "" : ` ${w.version}`;
  return `${w.command} (the witness of kube-proxy's image nft${version}, carried by the agent's image) was killed by SIGSEGV on this node: the crash #136786 reports, on sets a newer nft wrote`;
}

function setReadCrash(error: ProbeError | undefined): string | null {
  if (error?.kind !== "exec-failed" || !/\bSIGSEGV\b/.test(error.message)) return null;
  return `${error.command ?? "nft"} (the agent's own nft) was killed by SIGSEGV on this node: the crash #136786 reports, on sets a newer nft wrote`;
}

const THREADS =
  "kubernetes/kubernetes#136786 (reopened), #137501, #140405 (nft 1.0.6.1 in the image, v1.37.0), #140898";

export const nftTooNewForKubeProxy = rule({
  findings: {
    // Before the switch it blocks it (no fix) or asks for a canary (listing fix only); on a node already in
    // nftables mode the syncs crash whenever such a set exists.
    "nft-host-newer-than-kube-proxy-supports": {
      severity: ["warning", "error", "critical"],
      stage: ["before", "any"],
    },
  },
  needs: ["nftVersion", "kubeProxyMetrics"],
  evaluate({ facts, view: { phase }, failedProbes }) {
    const v = facts.nftVersion;
    const kp = versionParts(facts.kubeProxyMetrics?.gitVersion);
    // Not in `needs`: a missing or failed witness leaves the host's package to decide, as before it existed.
    const witnessed = witnessCrash(facts.kubeProxyNft);
    const observed = witnessed ?? setReadCrash(failedProbes.get("nftables"));
    const who =
      witnessed === null
        ? "nft"
        : `nft ${facts.kubeProxyNft?.version ?? ""} (as in kube-proxy's image)`.replace("  ", " ");
    const hostWrites = !!v && v.installed !== false && nftWritesSetUdata(v.version) === true;
    if (!v || (!hostWrites && observed === null) || !kp || phase === "none") return [];
    const fix = kubeProxyNftUdataFix(kp);
    if (fix === "image") return [];
    const after = phase === "nftables";
    const unfixed = fix === "none";
    const severity = unfixed ? (after ? "critical" : "error") : "warning";
    const image = KUBE_PROXY_NFT_IMAGE_FIXED.join(".");
    const kpVersion = facts.kubeProxyMetrics?.gitVersion;
    return [
      {
        id: "nft-host-newer-than-kube-proxy-supports",
        severity,
        stage: after ? "any" : "before",
        blocksMigration: unfixed && !after,
        title: hostWrites
          ? unfixed
            ? `Host nft ${v.version} with kube-proxy ${kpVersion}: nftables-mode syncs crash on the sets this nft writes`
            : `Host nft ${v.version} with kube-proxy ${kpVersion}: the listing fix is in, but syncs can still crash until kube-proxy v${image}`
          : unfixed
            ? `${who} crashed reading this node's sets, and kube-proxy ${kpVersion}'s nft will too: nftables-mode syncs crash`
            : `${who} crashed reading this node's sets: kube-proxy ${kpVersion} has the listing fix, but syncs can still crash until v${image}`,
        evidence: {
          nftVersion: v.version,
          nftSource: v.source,
          ...(observed !== null ? { observed } : {}),
          kubeProxyVersion: facts.kubeProxyMetrics?.gitVersion ?? null,
          trigger: `a set anywhere on this node written by nft ${NFT_WRITES_SET_UDATA.join(".")} or newer (the host's nft, or a container's in the host network namespace): kube-proxy's image nft segfaults reading its user data`,
          kubeProxyFix: unfixed
            ? "none: predates #137501 (1.33.11, 1.34.7, 1.35.4, 1.36.0; never in 1.32 or older)"
            : "#137501 only: kube-proxy lists its own table, but its sync (nft -f) still crashes (#136786 reopened, #140898)",
          fixedIn: `v${image} (#140405: nft 1.0.6.1 in kube-proxy's image)`,
          threads: THREADS,
        },
        remedy: unfixed
          ? `Upgrade kube-proxy to v${image} or newer (or at least a release with #137501) before switching this node to nftables mode, or keep nft older than ${NFT_WRITES_SET_UDATA.join(".")} on the host`
          : `Prefer kube-proxy v${image} or newer; on this release switch one canary node first and watch kubeproxy_sync_proxy_rules_nftables_sync_failures_total (rising means the crash: go back to the old mode)`,
      },
    ];
  },
});
