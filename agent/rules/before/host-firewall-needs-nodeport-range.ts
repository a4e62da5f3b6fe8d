import { DOCKER_FORWARD_DROP_WHY, dockerSetForwardDrop } from "../../view/not-counted.js";
import { BEFORE_SWITCH, listed, nextModeIsIptables, rule } from "../rule.js";

export const hostFirewall = rule({
  findings: {
    "host-firewall-needs-nodeport-range": {
      severity: "warning",
      stage: "before",
      tags: ["measure-before-switch"],
    },
  },
  needs: ["nftables", "iptables"],
  evaluate({ facts, view }, opts) {
    // iptables mode, the next mode below kernel 5.13, keeps accepting NodePort traffic itself (KUBE-FORWARD,
    // KUBE-NODEPORTS): only nftables mode leaves the host firewall to the user (KEP-3866).
    if (!BEFORE_SWITCH.has(view.phase) || nextModeIsIptables(view)) return [];
    const signs: string[] = [];
    for (const t of facts.nftables?.firewalls ?? [])
      signs.push(`nft table ${t.family} ${t.name} (${t.kind}; ${t.hooks.join(", ")})`);
    const accepts: string[] = [];
    const notCounted: string[] = [];
    for (const b of facts.iptables?.backends ?? []) {
      if (!b.read) continue;
      const dockers = dockerSetForwardDrop(b);
      for (const [chain, policy] of Object.entries(b.policies)) {
        if ((chain === "filter/INPUT" || chain === "filter/FORWARD") && policy === "DROP") {
          const seen = `${b.family} ${b.backend} ${chain} policy DROP`;
          // Docker's own FORWARD DROP is no host firewall (nobody opens NodePorts in it): seen, not counted.
          if (chain === "filter/FORWARD" && dockers) notCounted.push(`${seen}: ${DOCKER_FORWARD_DROP_WHY}`);
          else signs.push(seen);
        }
      }
      for (const [chain, rules] of Object.entries(b.firewallChains))
        signs.push(`${b.family} ${b.backend} chain ${chain} (${rules} rules)`);
      for (const a of b.nodePortAccepts)
        accepts.push(`${a.table}/${a.chain}: ${a.packets} packets, ${a.bytes} bytes: ${a.rule}`);
    }
    if (signs.length === 0) return [];
    return [
      {
        id: "host-firewall-needs-nodeport-range",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title: "A host firewall filters this node: nftables mode will not open NodePorts in it for you",
        evidence: {
          firewall: listed(signs, opts.maxListed),
          kubeProxyAcceptRules: listed(accepts, opts.maxListed),
          notCounted: listed(notCounted, opts.maxListed),
        },
        remedy:
          "Open the NodePort range (default 30000-32767/tcp,udp) and health-check ports in the host firewall before switching",
      },
    ];
  },
});
