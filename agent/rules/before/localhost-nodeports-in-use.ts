import { readCounter } from "../../view/counters.js";
import { nextModeIsIptables, rule } from "../rule.js";

const COUNTER = "kubeproxy_iptables_localhost_nodeports_accepted_packets_total";

export const localhostNodePorts = rule({
  findings: {
    "localhost-nodeports-in-use": { severity: "warning", stage: "before", tags: ["measure-before-switch"] },
  },
  needs: ["kubeProxyMetrics"],
  evaluate({ facts, view }) {
    const { phase, runningMode } = view;
    // Below kernel 5.13 the node stays in iptables mode, which keeps serving localhost NodePorts.
    if (phase !== "iptables" || nextModeIsIptables(view)) return [];
    const r = readCounter(facts, runningMode, COUNTER);
    if (r.state !== "value" || r.value <= 0) return [];
    return [
      {
        id: "localhost-nodeports-in-use",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title: `Something connects to NodePorts on 127.0.0.1 (${r.value} packets accepted): nftables mode does not serve them by default`,
        evidence: { [COUNTER]: r.value },
        remedy:
          'On Kubernetes 1.37+: featureGates: {KubeProxyNFTablesLocalhostNodePorts: true} and nodePortAddresses: ["primary", "localhost"]; otherwise point those clients at the node\'s address',
      },
    ];
  },
});
