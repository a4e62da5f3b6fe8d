import { listed, rule } from "../rule.js";

export const foreignIpvsUsers = rule({
  findings: { "foreign-ipvs-virtual-servers": { severity: "error", stage: "before" } },
  needs: ["ipvs", "kubeIpvs0", "addresses"],
  evaluate({ facts, view: { phase, virtualServers } }, opts) {
    if (!facts.ipvs || phase === "none") return [];
    const { foreign } = virtualServers;
    if (foreign.length === 0) return [];
    const names = foreign.map((v) =>
      v.fwmark !== null ? `FWM ${v.fwmark}` : `${v.protocol} ${v.address}:${v.port}`,
    );
    return [
      {
        id: "foreign-ipvs-virtual-servers",
        severity: "error",
        stage: "before",
        blocksMigration: phase !== "nftables",
        title: `${foreign.length} IPVS virtual servers are not kube-proxy's (keepalived, kube-vip, ...): nftables mode flushes all IPVS state on every start`,
        evidence: { count: foreign.length, virtualServers: listed(names, opts.maxListed) },
        remedy:
          "Move these VIPs off IPVS (or off this node) before switching: kube-proxy in nftables mode clears the whole IPVS table each time it starts",
      },
    ];
  },
});
