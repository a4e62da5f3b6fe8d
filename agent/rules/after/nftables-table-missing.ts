import { KUBE_PROXY_TABLE_FAMILIES } from "../../facts/kube-proxy-table.js";
import { rule } from "../rule.js";

// nftables mode programs both families on every node: kube-proxy assumes IPv4 and IPv6 support for it
// (cmd/kube-proxy/app/server_linux.go platformCheckSupported) and runs one proxier per family, each
// with its own `table <family> kube-proxy` (test/profiles/upstream-facts.md §c; facts/kube-proxy-table.ts).

export const nftablesTableMissing = rule({
  findings: { "nftables-table-missing": { severity: ["warning", "critical"], stage: "after" } },
  needs: ["nftables", "proxyMode"],
  evaluate({ facts, view: { runningMode } }) {
    if (runningMode !== "nftables" || facts.nftables === null) return [];
    const present = new Set(facts.nftables.kubeProxy.map((t) => t.family));
    const missing = KUBE_PROXY_TABLE_FAMILIES.filter((f) => !present.has(f));
    if (missing.length === 0) return [];
    const name = facts.nftables.kubeProxyTableName;
    // Without the ip table no IPv4 Service works here; without only the ip6 one, IPv6 Services do not
    // (on an IPv4-only cluster usually a kernel with IPv6 turned off, where kube-proxy's IPv6 syncs fail).
    const severity = missing.includes("ip") ? "critical" : "warning";
    return [
      {
        id: "nftables-table-missing",
        severity,
        stage: "after",
        blocksMigration: false,
        title: `kube-proxy answers nftables mode but there is no ${missing.map((f) => `table ${f} ${name}`).join(" and no ")}`,
        evidence: {
          missingFamilies: missing,
          tableName: name,
          tables: facts.nftables.tables.map((t) => `${t.family} ${t.name}`),
        },
        remedy:
          severity === "critical"
            ? "Read kube-proxy's log on this node (kubectl -n kube-system logs <kube-proxy pod>): its syncs are not reaching the kernel"
            : 'Read kube-proxy\'s log for its IPv6 syncs: on a kernel with IPv6 turned off they fail (kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family="IPv6"} rises); on a dual-stack cluster IPv6 Services do not work on this node',
      },
    ];
  },
});
