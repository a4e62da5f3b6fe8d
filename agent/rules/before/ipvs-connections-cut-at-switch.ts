import { nextModeIsIptables, rule } from "../rule.js";

// kube-proxy in nftables mode runs ipvs.CleanupLeftovers on start (cmd/kube-proxy/app/server_linux.go
// platformCleanup, for any mode that is not iptables-based): ipvs.Flush() and the deletion of kube-ipvs0
// (pkg/proxy/ipvs/cleanup.go cleanupLeftovers). IPVS NATs these flows itself, so no conntrack NAT binding
// carries them over and nftables' DNAT only sees new connections: each one in use through this node dies.
const KIND = { service: "Service IP", nodePort: "NodePort" } as const;

export const ipvsConnectionsCut = rule({
  findings: {
    // No "measure-before-switch" tag: draining is done at the switch itself, and the fleet plan's
    // switch step names these nodes (collector/plan/canary-then-pools.ts), not its counters step.
    "ipvs-connections-cut-at-switch": { severity: "warning", stage: "before" },
  },
  needs: ["ipvsConnections", "ipvs", "kubeIpvs0", "addresses"],
  evaluate({ view }) {
    const c = view.ipvsConnections;
    // The switch from ipvs mode flushes this table: kube-proxy itself must say it runs ipvs (on a guess
    // the node is unknown anyway); unread (null) claims no count at all. Below kernel 5.13 the next mode is
    // iptables, which platformCleanup leaves IPVS to (`if !isIPTablesBased(mode)`): nothing is flushed.
    if (view.runningMode !== "ipvs" || nextModeIsIptables(view) || c === null || c.established === 0)
      return [];
    const n = c.established;
    return [
      {
        id: "ipvs-connections-cut-at-switch",
        severity: "warning",
        stage: "before",
        blocksMigration: false,
        title: `${n} established connections through kube-proxy's IPVS virtual servers would be cut by the switch`,
        evidence: {
          established: n,
          closingOrUdp: c.other,
          virtualServersWithConnections: c.virtualServers,
          top: c.top.map((v) => {
            const parts = [
              ...(v.established > 0 ? [`${v.established} established`] : []),
              ...(v.other > 0 ? [`${v.other} other`] : []),
            ];
            return `${v.virtualServer} (${KIND[v.kind]}): ${parts.join(", ")}`;
          }),
        },
        remedy:
          `Drain the node first (kubectl cordon, then kubectl drain --ignore-daemonsets, and wait for its pods to move) — ${n} connections would be cut: ` +
          "nftables mode flushes IPVS when it starts, and IPVS did its own NAT, so no conntrack entry carries these flows. " +
          "What remains after the drain (DaemonSets, host processes, clients through its NodePorts) is cut once and must reconnect; " +
          "take NodePort/LoadBalancer traffic off the node first where the load balancer allows it",
      },
    ];
  },
});
