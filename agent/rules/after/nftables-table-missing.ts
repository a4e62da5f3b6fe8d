import { REF } from "../references.js";
import { rule } from "../rule.js";

export const nftablesTableMissing = rule({
  findings: { "nftables-table-missing": { severity: "critical", stage: "after" } },
  needs: ["nftables", "proxyMode"],
  evaluate({ facts, view: { runningMode } }) {
    if (runningMode !== "nftables" || facts.nftables === null) return [];
    if (facts.nftables.kubeProxy.length > 0) return [];
    return [
      {
        id: "nftables-table-missing",
        severity: "critical",
        stage: "after",
        blocksMigration: false,
        title: `kube-proxy answers nftables mode but there is no table ip/ip6 ${facts.nftables.kubeProxyTableName}`,
        evidence: {
          tableName: facts.nftables.kubeProxyTableName,
          tables: facts.nftables.tables.map((t) => `${t.family} ${t.name}`),
        },
        remedy:
          "Read kube-proxy's log on this node (kubectl -n kube-system logs <kube-proxy pod>): its syncs are not reaching the kernel",
        reference: REF.verify,
      },
    ];
  },
});
