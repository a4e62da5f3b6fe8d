import { rule } from "../rule.js";

export const kubeProxyUnhealthy = rule({
  findings: {
    "kube-proxy-node-draining": { severity: "info", stage: "any" },
    "kube-proxy-unhealthy": { severity: "error", stage: "any" },
  },
  needs: ["kubeProxyHealth"],
  evaluate({ facts }) {
    const h = facts.kubeProxyHealth;
    if (!h || h.status === 200) return [];
    if (h.healthy === true) {
      return [
        {
          id: "kube-proxy-node-draining",
          severity: "info",
          stage: "any",
          blocksMigration: false,
          title:
            "kube-proxy's health check answers 503 with healthy: true: the node is being deleted or drained",
          evidence: { status: h.status, healthy: true, nodeEligible: h.nodeEligible },
          remedy: "Nothing to fix in kube-proxy; load balancers are being told to stop sending to this node",
        },
      ];
    }
    return [
      {
        id: "kube-proxy-unhealthy",
        severity: "error",
        stage: "any",
        blocksMigration: false,
        title: `kube-proxy's health check answers ${h.status}`,
        evidence: { status: h.status, healthy: h.healthy, lastUpdated: h.lastUpdated },
        remedy:
          "Read kube-proxy's log on this node; load balancers with health checks on :10256 stop sending traffic here",
      },
    ];
  },
});
