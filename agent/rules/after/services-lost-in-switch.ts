import { listed, rule } from "../rule.js";

// Parity: a Service IP or NodePort IPVS served before the switch that no kube-proxy nftables map
// serves now. IPVS carries no names, so the address is the name here; the collector turns it into
// namespace/Service from the API.
export const servicesLostInSwitch = rule({
  findings: { "services-lost-in-switch": { severity: "error", stage: "after" } },
  needs: ["parity", "nftables", "proxyMode"],
  evaluate({ facts, view }) {
    // The snapshot is compared only against a mode kube-proxy itself says it runs, never a guessed one.
    if (view.runningMode !== "nftables") return [];
    const p = facts.parity;
    if (p === null || p.state !== "compared" || p.counts.missingAfter === 0) return [];
    const lost = p.services.filter((s) => s.status === "missing-after");
    const names = lost.map(
      (s) =>
        `${s.addresses.join(",")}/${s.protocol}${s.endpointsBefore > 0 ? ` (${s.endpointsBefore} endpoints before)` : ""}`,
    );
    return [
      {
        id: "services-lost-in-switch",
        severity: "error",
        stage: "after",
        blocksMigration: false,
        title: `${p.counts.missingAfter} Service address(es) IPVS served before the switch are served by no kube-proxy nftables map now`,
        evidence: {
          missingAfter: p.counts.missingAfter,
          same: p.counts.same,
          snapshotAgeSeconds: p.ageSeconds,
          lost: listed(names, 50),
        },
        remedy:
          "For each address: kubectl get svc -A -o wide | grep <address> (or the NodePort), then read kube-proxy's log on this node for that Service (a sync that failed for one family, a Service it could not program); `nft list map ip kube-proxy service-ips` shows what it serves. The agent's /parity lists every entry",
      },
    ];
  },
});
