import { LEFT_BEHIND } from "../../view/build.js";
import { deletion } from "../guess.js";
import { REF } from "../references.js";
import { listed, rule } from "../rule.js";

export const ipsetsLeft = rule({
  findings: { "kube-ipsets-left": { severity: "warning", stage: "after", tags: ["leftover"] } },
  needs: ["ipsets"],
  evaluate({ view }, opts) {
    const { phase, kubeProxyIpsets } = view;
    const sets = kubeProxyIpsets ?? [];
    if (sets.length === 0 || !LEFT_BEHIND.has(phase)) return [];
    const v6 = sets.filter((s) => s.name.startsWith("KUBE-6-"));
    return [
      {
        id: "kube-ipsets-left",
        severity: "warning",
        stage: "after",
        blocksMigration: false,
        title: `${sets.length} kube-proxy ipsets are left${v6.length > 0 ? ` (${v6.length} IPv6: kube-proxy's own cleanup only destroys the IPv4 ones)` : ""}`,
        evidence: {
          sets: listed(
            sets.map((s) => `${s.name} (${s.type}, ${s.entries} entries)`),
            opts.maxListed,
          ),
          ipv6Sets: v6.length,
        },
        remedy: deletion(
          view,
          "for s in $(ipset list -name | grep '^KUBE-'); do ipset destroy \"$s\"; done   (after the iptables chains that reference them are gone)",
        ),
        reference: REF.leftovers,
      },
    ];
  },
});
