import { listed, rule } from "../rule.js";

export const foreignChainReferences = rule({
  findings: { "foreign-rules-reference-kube-chains": { severity: "warning", stage: "before" } },
  needs: ["iptables"],
  evaluate({ facts }, opts) {
    // The parser lists only references to kube-proxy's exact chain and ipset names (facts/owners.ts), so
    // kube-router's KUBE-ROUTER-*/KUBE-NWPLCY-* jumps and its KUBE-SRC-*/KUBE-DST-* sets never land here.
    const read = (facts.iptables?.backends ?? []).flatMap((b) => (b.read ? [b] : []));
    const jumps = read.flatMap((b) =>
      b.foreignJumps.map((j) => `${b.family} ${b.backend} ${j.table}/${j.chain} -> ${j.target}: ${j.rule}`),
    );
    const sets = read.flatMap((b) =>
      (b.foreignSetMatches ?? []).map(
        (m) => `${b.family} ${b.backend} ${m.table}/${m.chain} matches ipset ${m.set}: ${m.rule}`,
      ),
    );
    if (jumps.length === 0 && sets.length === 0) return [];
    const what = [
      jumps.length > 0 ? `${jumps.length} jump into kube-proxy's chains` : null,
      sets.length > 0 ? `${sets.length} match kube-proxy's ipsets` : null,
    ]
      .filter((x) => x !== null)
      .join(", ");
    return [
      {
        id: "foreign-rules-reference-kube-chains",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title: `Rules outside kube-proxy reference its iptables state by name (${what}); they break silently when that state goes`,
        evidence: {
          count: jumps.length + sets.length,
          rules: listed(jumps, opts.maxListed),
          setMatches: listed(sets, opts.maxListed),
        },
        remedy:
          "Rewrite them against your own chains and sets or an nftables table hooked at the same priority; kube-proxy's chains and ipsets are not API (nftables mode deletes them)",
      },
    ];
  },
});
