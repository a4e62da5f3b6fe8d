import { readCounter } from "../../view/counters.js";
import { nextModeIsIptables, rule } from "../rule.js";

const COUNTER = "kubeproxy_iptables_localhost_nodeports_accepted_packets_total";

// The counter exists from v1.31 (kubernetes/kubernetes#125015, CHANGELOG-1.31) and is an nfacct collector,
// exported only when the kernel counter could be read. Without it nobody can tell whether anything reaches
// NodePorts on 127.0.0.1 — which nftables mode does not serve by default — so say so instead of nothing.
export const localhostNodePortsNotMeasurable = rule({
  findings: { "localhost-nodeports-not-measurable": { severity: "info", stage: "before" } },
  needs: ["kubeProxyMetrics"],
  evaluate({ facts, view }) {
    const { phase, runningMode } = view;
    // Below kernel 5.13 the node stays in iptables mode, which keeps serving localhost NodePorts.
    if (phase !== "iptables" || nextModeIsIptables(view)) return [];
    const r = readCounter(facts, runningMode, COUNTER);
    if (r.state !== "not-applicable" && r.state !== "missing") return [];
    // No loopback in nodePortAddresses: kube-proxy serves no localhost NodePorts, nothing to measure.
    const npa = facts.configz?.nodePortAddresses;
    if (npa && npa.length > 0 && !npa.some((a) => /^(127\.|::1|localhost$)/.test(a))) return [];
    const version = facts.kubeProxyMetrics?.gitVersion ?? null;
    const why =
      r.state === "not-applicable"
        ? `kube-proxy ${version ?? "(version unknown)"} predates the counter (added in v1.31)`
        : "kube-proxy exports no value for it: its nfacct counter could not be read on this node";
    return [
      {
        id: "localhost-nodeports-not-measurable",
        severity: "info",
        stage: "before",
        blocksMigration: false,
        title: `Whether anything uses NodePorts on 127.0.0.1 cannot be measured here: ${why}`,
        evidence: { [COUNTER]: "not exported", kubeProxyVersion: version, why },
        remedy:
          "Check by hand before the switch, over a busy period: conntrack -L -d 127.0.0.1 on the node, looking for connections to a NodePort port answered by a pod address (or upgrade kube-proxy to 1.31+ and read the counter). nftables mode does not serve localhost NodePorts unless nodePortAddresses includes localhost (1.37 alpha gate KubeProxyNFTablesLocalhostNodePorts)",
      },
    ];
  },
});
