import { REF } from "../references.js";
import { listed, rule } from "../rule.js";

export const foreignChainReferences = rule({
  findings: { "foreign-rules-reference-kube-chains": { severity: "warning", stage: "before" } },
  needs: ["iptables"],
  evaluate({ facts }, opts) {
    const jumps = (facts.iptables?.backends ?? []).flatMap((b) =>
      !b.read
        ? []
        : b.foreignJumps.map(
            (j) => `${b.family} ${b.backend} ${j.table}/${j.chain} -> ${j.target}: ${j.rule}`,
          ),
    );
    if (jumps.length === 0) return [];
    return [
      {
        id: "foreign-rules-reference-kube-chains",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title: `${jumps.length} rules outside kube-proxy jump into KUBE-* chains by name; they break silently when those chains go`,
        evidence: { count: jumps.length, rules: listed(jumps, opts.maxListed) },
        remedy:
          "Rewrite them against your own chains or an nftables table hooked at the same priority; kube-proxy's chains are not API",
        reference: REF.chainsNotApi,
      },
    ];
  },
});
