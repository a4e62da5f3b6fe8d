import { forwardDrops, servesIpv6 } from "../../view/forward-drop.js";
import { listed, rule } from "../rule.js";

// nftables mode DNATs in prerouting and accepts nothing in forward (pkg/proxy/nftables/proxier.go v1.34.4:
// filter-forward only rejects), and an accept in its table cannot overrule another base chain's drop:
// new flows to endpoints on other nodes rest on the network plugin's FORWARD accepts.
export const forwardDropAfterSwitch = rule({
  findings: { "forward-drop-after-switch": { severity: ["warning", "error"], stage: "after" } },
  needs: ["iptables", "nftables", "proxyMode"],
  evaluate({ facts, view }, opts) {
    if (view.runningMode !== "nftables" || facts.nftables === null) return [];
    const { uncovered, covered } = forwardDrops(facts, servesIpv6(facts, []));
    if (uncovered.length === 0) return [];
    // Services with endpoints programmed: their forwarded flows are being dropped now.
    const serving = facts.nftables.kubeProxy.some((t) => t.chains.endpoint > 0);
    const severity = serving ? "error" : "warning";
    return [
      {
        id: "forward-drop-after-switch",
        severity,
        stage: "after",
        blocksMigration: false,
        title: serving
          ? "FORWARD drops Service traffic to pods on other nodes: no network plugin accepts it"
          : "FORWARD will drop Service traffic to pods on other nodes once kube-proxy programs endpoints",
        evidence: { drops: listed(uncovered, opts.maxListed), covered: listed(covered, opts.maxListed) },
        remedy:
          "Accept forwarded pod traffic: e.g. iptables -I DOCKER-USER -s <pod CIDR> -j ACCEPT and -d <pod CIDR> -j ACCEPT (Docker), or an accept for the pod CIDR in your firewall's forward chain",
      },
    ];
  },
});
