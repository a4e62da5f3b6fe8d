import { LEFT_BEHIND } from "../../view/build.js";
import { connectionsTo, cutSentence } from "../../view/ipvs-connections.js";
import { kubeIpvs0ServiceIps } from "../../view/kube-ipvs0.js";
import { deletion } from "../guess.js";
import { listed, rule } from "../rule.js";

export const kubeIpvs0Left = rule({
  findings: {
    "kube-ipvs0-black-hole": { severity: "critical", stage: "any" },
    "kube-ipvs0-left": { severity: "warning", stage: "after", tags: ["leftover"] },
  },
  needs: ["kubeIpvs0", "ipvs"],
  evaluate({ facts, view }, opts) {
    const { phase, blackHoled } = view;
    const k = facts.kubeIpvs0;
    if (!k?.present) return [];
    // The Service IPs it holds; an up link's own fe80:: address is none (view/kube-ipvs0.ts).
    const addresses = kubeIpvs0ServiceIps(k);
    // Without the IPVS table (blackHoled null) nobody can tell which addresses are backed: "left" only.
    const holes = blackHoled ?? [];
    if (holes.length > 0) {
      return [
        {
          id: "kube-ipvs0-black-hole",
          severity: "critical",
          stage: "any",
          blocksMigration: false,
          title: `kube-ipvs0 still holds ${holes.length} addresses with no IPVS virtual server behind them: this node answers for those IPs and drops the traffic`,
          evidence: {
            blackHoledCount: holes.length,
            blackHoled: listed(holes, opts.maxListed),
            addressesOnKubeIpvs0: addresses.length,
            operState: k.operState,
          },
          remedy: deletion(
            view,
            "ip link delete kube-ipvs0   (only ipvs mode recreates it; run once kube-proxy answers nftables on this node)",
          ),
        },
      ];
    }
    if (!LEFT_BEHIND.has(phase)) return [];
    // Without its address on the node IPVS no longer sees a Service IP's packets: those connections die.
    const onLink = new Set(addresses);
    const cut = cutSentence(connectionsTo(facts, (a) => onLink.has(a.address)));
    return [
      {
        id: "kube-ipvs0-left",
        severity: "warning",
        stage: "after",
        blocksMigration: false,
        title: `kube-ipvs0 is still present (${addresses.length} addresses)`,
        evidence: { addresses: listed(addresses, opts.maxListed), operState: k.operState },
        remedy: deletion(view, `ip link delete kube-ipvs0${cut}`),
      },
    ];
  },
});
