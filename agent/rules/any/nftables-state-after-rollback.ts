import type { NodeFacts } from "../../report/schema.js";
import { deleteKubeProxyTablesCommand, kubeProxyTableName } from "../../facts/kube-proxy-table.js";
import { deletion } from "../guess.js";
import { rule } from "../rule.js";
import { kubeIpvs0ServiceIps } from "../../view/kube-ipvs0.js";

/**
 * Whether the ipvs data plane came back after a rollback from nftables mode: IPVS virtual servers exist and
 * kube-ipvs0 holds the ClusterIPs (every cluster has at least the kubernetes Service's). Unread is not back.
 */
function ipvsDataPlane(facts: NodeFacts): { back: boolean | null; evidence: Record<string, unknown> } {
  const vs = facts.ipvs === null || !facts.ipvs.available ? null : facts.ipvs.virtualServerCount;
  const dummy = facts.kubeIpvs0 === null ? null : kubeIpvs0ServiceIps(facts.kubeIpvs0).length;
  const missing = [
    vs === 0 ? "no IPVS virtual servers" : null,
    dummy === 0 ? "kube-ipvs0 absent or empty" : null,
  ];
  return {
    back: missing.some(Boolean) ? false : vs === null || dummy === null ? null : true,
    evidence: {
      ipvsVirtualServers: vs ?? "not read",
      kubeIpvs0Addresses: dummy ?? "not read",
      ipvsDataPlane:
        missing.filter(Boolean).join(", ") || (vs === null || dummy === null ? "not read" : "back"),
    },
  };
}

/** nftables state on a node back in ipvs/iptables mode: a rollback whose cleanup did not run. */
export const rollbackLeftovers = rule({
  findings: { "nftables-state-after-rollback": { severity: ["warning", "critical"], stage: "any" } },
  needs: ["nftables"],
  evaluate({ facts, view }) {
    const { phase, mixed } = view;
    if (phase !== "ipvs" && phase !== "iptables") return [];
    const nft = mixed.filter((m) => m.mode === "nftables");
    if (nft.length === 0) return [];
    // Only when kube-proxy itself says ipvs: then its virtual servers and kube-ipvs0 must be there.
    const check = view.runningMode === "ipvs" ? ipvsDataPlane(facts) : null;
    const notBack = check?.back === false;
    // Delete the table kube-proxy uses: the one /configz names; unread, the default, said to be one.
    const del = `${deleteKubeProxyTablesCommand(kubeProxyTableName(facts.configz))}${
      facts.configz === null ? " (kube-proxy's default table name; /configz not read)" : ""
    }`;
    return [
      {
        id: "nftables-state-after-rollback",
        severity: notBack ? "critical" : "warning",
        stage: "any",
        blocksMigration: false,
        title: notBack
          ? `kube-proxy answers ipvs after nftables mode, but the ipvs data plane is not back (${String(check?.evidence["ipvsDataPlane"])}): Services on this node are not served by IPVS`
          : view.inferred
            ? `The kernel's live state says ${phase} mode, and kube-proxy's nftables tables are also present`
            : `kube-proxy runs ${phase} mode but kube-proxy's nftables tables are still present`,
        evidence: { tables: nft.map((m) => m.evidence), ...(check?.evidence ?? {}) },
        remedy: notBack
          ? `Do not delete the nftables tables yet: they may be what still carries this node's Services. Read kube-proxy's log for its ipvs sync (modules ip_vs*, ipset), then restart kube-proxy; once ipvsadm -Ln lists the Services and ip addr show kube-ipvs0 holds the ClusterIPs, remove the tables (${del})`
          : deletion(
              view,
              del,
              `kube-proxy answers ${phase} on /proxyMode (or is gone from this node for good)`,
            ),
      },
    ];
  },
});
