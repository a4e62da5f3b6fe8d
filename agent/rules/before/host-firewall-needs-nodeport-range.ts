import { REF } from "../references.js";
import { BEFORE_SWITCH, listed, rule } from "../rule.js";

export const hostFirewall = rule({
  findings: {
    "host-firewall-needs-nodeport-range": {
      severity: "warning",
      stage: "before",
      tags: ["measure-before-switch"],
    },
  },
  needs: ["nftables", "iptables"],
  evaluate({ facts, view: { phase } }, opts) {
    if (!BEFORE_SWITCH.has(phase)) return [];
    const signs: string[] = [];
    for (const t of facts.nftables?.firewalls ?? [])
      signs.push(`nft table ${t.family} ${t.name} (${t.kind}; ${t.hooks.join(", ")})`);
    const accepts: string[] = [];
    for (const b of facts.iptables?.backends ?? []) {
      if (!b.read) continue;
      for (const [chain, policy] of Object.entries(b.policies)) {
        if ((chain === "filter/INPUT" || chain === "filter/FORWARD") && policy === "DROP") {
          signs.push(`${b.family} ${b.backend} ${chain} policy DROP`);
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
        },
        remedy:
          "Open the NodePort range (default 30000-32767/tcp,udp) and health-check ports in the host firewall before switching",
        reference: REF.firewall,
      },
    ];
  },
});
