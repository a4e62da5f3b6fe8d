import { deletion } from "../guess.js";
import { listed, rule } from "../rule.js";

export const ipvsChainsLeft = rule({
  findings: { "ipvs-iptables-chains-left": { severity: "warning", stage: "after", tags: ["leftover"] } },
  needs: ["iptables"],
  evaluate({ view }, opts) {
    const { phase, kubeProxyChains } = view;
    if (phase !== "nftables" && phase !== "none") return [];
    // Unread backends hold unknown chains: they count for nothing here, and scan-incomplete says so.
    const backends = (kubeProxyChains ?? []).filter((b) => b.read);
    const left = backends.flatMap((b) =>
      b.chains.map((c) => `${b.family} ${b.backend} ${c.table}/${c.name} (${c.rules} rules, ${c.owner})`),
    );
    const perService = backends.reduce((n, b) => n + b.perService, 0);
    if (left.length === 0 && perService === 0) return [];
    return [
      {
        id: "ipvs-iptables-chains-left",
        severity: "warning",
        stage: "after",
        blocksMigration: false,
        title: `${left.length + perService} kube-proxy iptables chains are left from the previous mode (kubelet's chains are not counted)`,
        evidence: { chains: listed(left, opts.maxListed), perServiceChains: perService },
        remedy: deletion(
          view,
          "kube-proxy --cleanup with kube-proxy stopped on this node, or proxyscope-agent cleanup; KUBE-FIREWALL (filter), KUBE-KUBELET-CANARY and KUBE-IPTABLES-HINT are kubelet's: keep them",
        ),
      },
    ];
  },
});
