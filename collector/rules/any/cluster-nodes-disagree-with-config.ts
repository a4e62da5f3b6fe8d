import { CONFIG_SOURCE_NEEDS, configSource } from "../../checks/config-source.js";
import { rule } from "../rule.js";

const MODES = ["ipvs", "iptables", "nftables"];

/** What the nodes really run against the configured mode (a config changed but pods not restarted). */
export const nodesDisagreeWithConfig = rule({
  findings: { "cluster-nodes-disagree-with-config": { severity: "warning", stage: "any" } },
  needs: [...CONFIG_SOURCE_NEEDS, "observed"],
  evaluate({ facts, observed }) {
    // The default when a source read names no mode is iptables (through 1.37, per the guide); an unread
    // or invisible source expects nothing.
    const src = configSource(facts, observed);
    const expected = src.mode ?? (src.pin === "not-pinned" ? "iptables" : null);
    if (!facts.kubeProxyDaemonSet || expected === null || !MODES.includes(expected)) return [];
    const off = observed.filter((o) => MODES.includes(o.phase) && o.phase !== expected);
    if (off.length === 0) return [];
    return [
      {
        id: "cluster-nodes-disagree-with-config",
        severity: "warning",
        stage: "any",
        blocksMigration: false,
        title: `${off.length} node(s) run a mode other than the configured ${expected}: config changed but pods not restarted, or a canary in progress`,
        evidence: { configured: expected, nodes: off.map((o) => `${o.node}=${o.phase}`) },
        remedy:
          "If this is not a canary in progress, restart kube-proxy on those nodes one at a time (kubectl -n kube-system delete pod --field-selector spec.nodeName=NODE -l k8s-app=kube-proxy)",
      },
    ];
  },
});
