import { deletion } from "../guess.js";
import { rule } from "../rule.js";

/** nftables state on a node back in ipvs/iptables mode: a rollback whose cleanup did not run. */
export const rollbackLeftovers = rule({
  findings: { "nftables-state-after-rollback": { severity: "warning", stage: "any" } },
  needs: ["nftables"],
  evaluate({ view }) {
    const { phase, mixed } = view;
    if (phase !== "ipvs" && phase !== "iptables") return [];
    const nft = mixed.filter((m) => m.mode === "nftables");
    if (nft.length === 0) return [];
    return [
      {
        id: "nftables-state-after-rollback",
        severity: "warning",
        stage: "any",
        blocksMigration: false,
        title: view.inferred
          ? `The kernel's live state says ${phase} mode, and kube-proxy's nftables tables are also present`
          : `kube-proxy runs ${phase} mode but kube-proxy's nftables tables are still present`,
        evidence: { tables: nft.map((m) => m.evidence) },
        remedy: deletion(
          view,
          "nft delete table ip kube-proxy; nft delete table ip6 kube-proxy",
          `kube-proxy answers ${phase} on /proxyMode (or is gone from this node for good)`,
        ),
      },
    ];
  },
});
