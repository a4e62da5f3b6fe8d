import { listed, rule } from "../rule.js";

// The xt_ipvs match (`-m ipvs`, iptables-extensions(8)) matches only packets IPVS handled. nftables mode
// flushes IPVS on start (cmd/kube-proxy/app/server_linux.go platformCleanup -> ipvs CleanupLeftovers,
// v1.34.4) and DNATs in nftables, so after the switch such a rule matches nothing, silently.
export const ipvsMatchRules = rule({
  findings: {
    "ipvs-match-rules-stop-applying": {
      severity: "warning",
      stage: "before",
      tags: ["measure-before-switch"],
    },
  },
  needs: ["iptables", "proxyMode"],
  evaluate({ facts, view }, opts) {
    // Rests on kube-proxy's ipvs mode running: only its own answer says so. (kube-router's service proxy
    // keeps its IPVS, and its `-m ipvs` rules, whatever kube-proxy does: no answer of ipvs, no finding.)
    if (view.runningMode !== "ipvs") return [];
    const rules: string[] = [];
    const notRead: string[] = [];
    let count = 0;
    for (const b of facts.iptables?.backends ?? []) {
      if (!b.read) continue; // fails the iptables probe (facts/unread.ts): the node is not called ready
      if (b.ipvsMatches === undefined) notRead.push(`${b.family} ${b.backend}`);
      else {
        // An older agent's backend has the list only: its length is all that is known.
        count += b.ipvsMatchCount ?? b.ipvsMatches.length;
        for (const m of b.ipvsMatches)
          rules.push(`${b.family} ${b.backend} ${m.table}/${m.chain}: ${m.rule}`);
      }
    }
    if (rules.length === 0 && notRead.length === 0) return [];
    return [
      {
        id: "ipvs-match-rules-stop-applying",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title:
          rules.length > 0
            ? "Rules here match IPVS state (-m ipvs): after the switch no packet is IPVS's, and they match nothing"
            : "Whether rules here match IPVS state (-m ipvs) was not read",
        evidence: { count, rules: listed(rules, opts.maxListed), notRead },
        remedy:
          "Rewrite each rule before switching: match the Service's address and port (-d <ClusterIP> -p tcp --dport <port>) or the conntrack original destination (-m conntrack --ctorigdst <ClusterIP> --ctorigdstport <port>) instead of -m ipvs",
      },
    ];
  },
});
