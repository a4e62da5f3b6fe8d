import { NFT_MIN_VERSION } from "../../parse/versions.js";
import { BEFORE_SWITCH, rule } from "../rule.js";

const REQUIRED = NFT_MIN_VERSION.join(".");

export const nftTooOld = rule({
  findings: { "nft-too-old": { severity: "error", stage: "before" } },
  needs: ["nftVersion", "osRelease"],
  evaluate({ facts, view: { phase, hostNftNewEnough } }) {
    const v = facts.nftVersion;
    if (!v || hostNftNewEnough !== false || !BEFORE_SWITCH.has(phase)) return [];
    return [
      {
        id: "nft-too-old",
        severity: "error",
        stage: "before",
        blocksMigration: true,
        title: `Host nft ${v.version} is older than ${REQUIRED}`,
        evidence: {
          nftVersion: v.version,
          source: v.source,
          required: REQUIRED,
          os: facts.osRelease?.prettyName ?? null,
          // The guide passes Ubuntu 20.04 on the 5.15 HWE kernel on its kernel alone; upstream's minimum is the host's nft.
          departsFromGuide:
            "the guide calls Ubuntu 20.04 on the 5.15 HWE kernel fine; its nft 0.9.3 is below upstream's minimum (do not run nftables mode with host nft < 1.0.0; with a system nft <= 0.9.8 'the system nft will become completely unusable', kube-proxy's getNFTablesInterface)",
        },
        remedy:
          "Upgrade the host's nftables package to 1.0.1 or newer (Ubuntu 20.04 ships 0.9.3 even on the 5.15 HWE kernel, which the guide calls fine but upstream does not: rebuild on 22.04/24.04), or stay in iptables mode",
      },
    ];
  },
});
