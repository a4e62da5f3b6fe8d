import { readCounter } from "../../view/counters.js";
import { rule } from "../rule.js";

const COUNTER = "kubeproxy_nftables_localhost_nodeport_rejected_packets_total";

export const localhostNodePortsRejected = rule({
  findings: { "localhost-nodeports-rejected": { severity: "warning", stage: "after" } },
  needs: ["kubeProxyMetrics"],
  evaluate({ facts, view: { phase, runningMode } }) {
    if (phase !== "nftables") return [];
    const r = readCounter(facts, runningMode, COUNTER);
    if (r.state !== "value" || r.value <= 0) return [];
    return [
      {
        id: "localhost-nodeports-rejected",
        severity: "warning",
        stage: "after",
        blocksMigration: false,
        title: `${r.value} packets to NodePorts on localhost were rejected`,
        evidence: { [COUNTER]: r.value },
        remedy:
          'Kubernetes 1.37+: featureGates: {KubeProxyNFTablesLocalhostNodePorts: true} with nodePortAddresses: ["primary", "localhost"], or repoint those clients',
      },
    ];
  },
});
