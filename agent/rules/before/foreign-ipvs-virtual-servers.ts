import { listed, nextModeIsIptables, rule } from "../rule.js";

export const foreignIpvsUsers = rule({
  findings: { "foreign-ipvs-virtual-servers": { severity: "error", stage: "before" } },
  // ipsets: kube-proxy's KUBE-NODE-PORT-* say which ports are NodePorts; configz: its ipvs.excludeCIDRs say
  // which addresses are not its own. Either unread leaves a port-range guess (view/virtual-servers.ts).
  needs: ["ipvs", "kubeIpvs0", "addresses", "ipsets", "configz"],
  evaluate({ facts, view }, opts) {
    const { phase, virtualServers } = view;
    if (!facts.ipvs || phase === "none") return [];
    const { foreign, nodePortsGuessed } = virtualServers;
    if (foreign.length === 0) return [];
    const name = (v: (typeof foreign)[number]) =>
      v.fwmark !== null ? `FWM ${v.fwmark}` : `${v.protocol} ${v.address}:${v.port}`;
    return [
      {
        id: "foreign-ipvs-virtual-servers",
        severity: "error",
        stage: "before",
        blocksMigration: phase !== "nftables",
        title: `${foreign.length} IPVS virtual servers are not kube-proxy's (keepalived, kube-vip, ...): nftables mode flushes all IPVS state on every start`,
        evidence: {
          count: foreign.length,
          virtualServers: listed(foreign.map(name), opts.maxListed),
          // Taken for kube-proxy's NodePorts by the port range alone (its NodePort sets not read): not
          // counted above, and not proven kube-proxy's either.
          nodePortsGuessedFromRange: listed(nodePortsGuessed.map(name), opts.maxListed),
        },
        remedy: `Move these VIPs off IPVS (or off this node) before switching: kube-proxy in nftables mode clears the whole IPVS table each time it starts${
          nextModeIsIptables(view)
            ? ". On this kernel (below 5.13) the next mode is iptables, which leaves IPVS alone (cmd/kube-proxy/app/server_linux.go platformCleanup cleans ipvs state only for a mode that is not iptables-based): they go down with the later move to nftables"
            : ""
        }`,
      },
    ];
  },
});
