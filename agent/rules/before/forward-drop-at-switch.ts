import { forwardDrops, servesIpv6 } from "../../view/forward-drop.js";
import { listed, nextModeIsIptables, rule } from "../rule.js";

// ipvs mode DNATs in INPUT (the Service IP is local on kube-ipvs0), sends the packet out through OUTPUT,
// and its own KUBE-FORWARD accepts masquerade-marked and established traffic (pkg/proxy/ipvs/proxier.go
// v1.34.4). nftables mode DNATs in prerouting (pkg/proxy/nftables/proxier.go v1.34.4 nftablesBaseChains)
// and accepts nothing in forward: new NodePort / externalIP flows to remote endpoints meet FORWARD's policy.
export const forwardDropAtSwitch = rule({
  findings: {
    "forward-drop-at-switch": { severity: "warning", stage: "before", tags: ["measure-before-switch"] },
  },
  needs: ["iptables", "nftables", "proxyMode"],
  evaluate({ facts, view }, opts) {
    // Rests on what ipvs mode does today: only kube-proxy's own answer says it runs. Below kernel 5.13
    // the next mode is iptables, whose KUBE-FORWARD accepts as ipvs mode's does.
    if (view.runningMode !== "ipvs" || nextModeIsIptables(view)) return [];
    const { uncovered, covered } = forwardDrops(
      facts,
      servesIpv6(facts, [...view.virtualServers.services, ...view.virtualServers.nodePorts]),
    );
    if (uncovered.length === 0) return [];
    return [
      {
        id: "forward-drop-at-switch",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title:
          "FORWARD drops what no network plugin accepts: after the switch, Service traffic to pods on other nodes is forwarded and dropped",
        evidence: { drops: listed(uncovered, opts.maxListed), covered: listed(covered, opts.maxListed) },
        remedy:
          "Before switching, accept forwarded pod traffic: e.g. iptables -I DOCKER-USER -s <pod CIDR> -j ACCEPT and -d <pod CIDR> -j ACCEPT (Docker), or an accept for the pod CIDR in your firewall's forward chain; or start dockerd with --ip-forward-no-drop",
      },
    ];
  },
});
