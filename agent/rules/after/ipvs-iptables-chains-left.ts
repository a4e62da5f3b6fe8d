import { deletion } from "../guess.js";
import { listed, rule } from "../rule.js";

export const ipvsChainsLeft = rule({
  findings: { "ipvs-iptables-chains-left": { severity: "warning", stage: "after", tags: ["leftover"] } },
  needs: ["iptables"],
  evaluate({ view }, opts) {
    const { phase, kubeProxyChains } = view;
    if (phase !== "nftables" && phase !== "none" && phase !== "iptables") return [];
    // In iptables mode kube-proxy owns its shared chains and every per-Service chain; what is left is ipvs
    // mode's own, which nothing cleans when the new mode is iptables-based (cmd/kube-proxy/app/server_linux.go
    // platformCleanup) and which INPUT/OUTPUT still jump to (KUBE-IPVS-FILTER, KUBE-NODE-PORT).
    const onIptables = phase === "iptables";
    // Unread backends hold unknown chains: they count for nothing here, and scan-incomplete says so.
    const backends = (kubeProxyChains ?? []).filter((b) => b.read);
    const left = backends.flatMap((b) =>
      b.chains
        .filter((c) => !onIptables || c.owner === "kube-proxy-ipvs")
        .map((c) => `${b.family} ${b.backend} ${c.table}/${c.name} (${c.rules} rules, ${c.owner})`),
    );
    const perService = onIptables ? 0 : backends.reduce((n, b) => n + b.perService, 0);
    if (left.length === 0 && perService === 0) return [];
    return [
      {
        id: "ipvs-iptables-chains-left",
        severity: "warning",
        stage: "after",
        blocksMigration: false,
        title: onIptables
          ? `${left.length} of ipvs mode's iptables chains are left beside iptables mode's own, and still act (KUBE-IPVS-FILTER rejects new connections to kube-ipvs0's addresses)`
          : `${left.length + perService} kube-proxy iptables chains are left from the previous mode (kubelet's chains are not counted)`,
        evidence: { chains: listed(left, opts.maxListed), perServiceChains: perService },
        remedy: deletion(
          view,
          onIptables
            ? "with kube-proxy stopped on this node, kube-proxy --cleanup (it removes every mode's rules, ipvs mode's chains, ipsets and kube-ipvs0 included), then start kube-proxy again in iptables mode, which rebuilds its own chains; KUBE-FIREWALL (filter), KUBE-KUBELET-CANARY and KUBE-IPTABLES-HINT are kubelet's: keep them"
            : "kube-proxy --cleanup with kube-proxy stopped on this node, or proxyscope-agent cleanup; KUBE-FIREWALL (filter), KUBE-KUBELET-CANARY and KUBE-IPTABLES-HINT are kubelet's: keep them",
        ),
      },
    ];
  },
});
