import { listed, rule } from "../rule.js";

// Endpoints change on their own (rollouts, scaling) between the snapshot and now, so a difference is
// churn until proven otherwise: info, unless a Service that had endpoints has none now or many
// Services differ, which churn alone rarely explains.
const MANY = 0.1;

export const serviceEndpointsDiffer = rule({
  findings: { "service-endpoints-differ-after-switch": { severity: ["info", "warning"], stage: "after" } },
  needs: ["parity", "nftables", "proxyMode"],
  evaluate({ facts, view }) {
    // The snapshot is compared only against a mode kube-proxy itself says it runs, never a guessed one.
    if (view.runningMode !== "nftables") return [];
    const p = facts.parity;
    if (p === null || p.state !== "compared" || p.counts.endpointsDiffer === 0) return [];
    const differ = p.services.filter((s) => s.status === "endpoints-differ");
    const emptied = differ.filter((s) => s.endpointsBefore > 0 && s.endpointsAfter === 0);
    const compared = p.counts.same + p.counts.endpointsDiffer;
    const share = compared === 0 ? 0 : p.counts.endpointsDiffer / compared;
    const severity = emptied.length > 0 || share > MANY ? "warning" : "info";
    return [
      {
        id: "service-endpoints-differ-after-switch",
        severity,
        stage: "after",
        blocksMigration: false,
        title: `${p.counts.endpointsDiffer} of ${compared} Service ports have other endpoints than IPVS had ${Math.round(p.ageSeconds / 60)} min ago${emptied.length > 0 ? `; ${emptied.length} have none now` : ""}`,
        evidence: {
          endpointsDiffer: p.counts.endpointsDiffer,
          compared,
          nowWithoutEndpoints: emptied.length,
          snapshotAgeSeconds: p.ageSeconds,
          services: listed(
            differ.map(
              (s) =>
                `${s.service ?? s.addresses.join(",")}/${s.protocol}: ${s.endpointsBefore} -> ${s.endpointsAfter}${s.gone.length > 0 ? ` gone ${s.gone.join(" ")}` : ""}${s.added.length > 0 ? ` new ${s.added.join(" ")}` : ""}`,
            ),
            30,
          ),
        },
        remedy:
          "Compare each with its current EndpointSlices (kubectl -n <ns> get endpointslices -l kubernetes.io/service-name=<svc> -o wide): endpoints the API still lists but nftables lacks are a real loss (read kube-proxy's log); endpoints the API no longer lists are churn since the snapshot. The collector does this comparison fleet-wide",
      },
    ];
  },
});
