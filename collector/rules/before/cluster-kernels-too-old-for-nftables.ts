import { releaseCanRunNftables } from "../../../agent/contract.js";
import { rule } from "../rule.js";

/** From the Node objects alone, so it holds even for nodes whose agent never answered. */
export const kernelsTooOld = rule({
  findings: { "cluster-kernels-too-old-for-nftables": { severity: "error", stage: "before" } },
  needs: ["nodes"],
  evaluate({ facts: { nodes } }) {
    const old = nodes.filter((n) => releaseCanRunNftables(n.kernelVersion) === false);
    if (old.length === 0) return [];
    return [
      {
        id: "cluster-kernels-too-old-for-nftables",
        severity: "error",
        stage: "before",
        blocksMigration: true,
        title: `${old.length} of ${nodes.length} node(s) run a kernel older than 5.13: nftables mode cannot start there`,
        evidence: { nodes: old.map((n) => `${n.name} ${n.kernelVersion} (${n.osImage ?? "unknown OS"})`) },
        remedy:
          "Rebuild those node images on a 5.13+ kernel (RHEL 9, Debian 12, Ubuntu 22.04+, AL2023), or move them to iptables mode — not the KubeProxyIPVS gate",
      },
    ];
  },
});
