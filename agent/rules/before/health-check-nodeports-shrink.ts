import { nodePortDestinations, primaryAddresses } from "../../view/not-counted.js";
import { listed, nextModeIsIptables, rule } from "../rule.js";

const EVERY_ADDRESS = new Set(["0.0.0.0", "::"]);
const shown = (address: string, port: number) =>
  address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;

/**
 * kube-proxy's service health server (the healthCheckNodePort of `externalTrafficPolicy: Local`
 * LoadBalancer Services) listens on 0.0.0.0 while nodePortAddresses matches all, and only on the matched
 * node IPs otherwise (kubernetes/kubernetes pkg/proxy/healthcheck/service_health.go
 * newServiceHealthServer: `nodeIPs := []net.IP{net.IPv4zero}; if !nodePortAddresses.MatchAll() {…}`);
 * nftables mode defaults nodePortAddresses to `primary` (cmd/kube-proxy/app/server_linux.go
 * platformApplyDefaults; pkg/proxy/nftables Init). Both read on master. An LB or keepalived checking a
 * secondary address or VIP then sees every node as down: with checks seen arriving there, that is an
 * outage of every ETP-Local Service the switch would cause, fixed by one config line before it — so it
 * blocks. Listening everywhere with no use seen is a warning to check.
 */
export const healthCheckNodePortsShrink = rule({
  findings: {
    "health-check-nodeports-shrink": {
      severity: ["warning", "error"],
      stage: "before",
      tags: ["measure-before-switch"],
    },
  },
  needs: ["listeners", "configz", "addresses", "ipsets"],
  evaluate({ facts, view }, opts) {
    const { listeners, configz, addresses } = facts;
    // Below kernel 5.13 the next mode is iptables, whose nodePortAddresses still defaults to every address.
    if (view.phase !== "ipvs" || nextModeIsIptables(view) || !listeners || !configz || !addresses) return [];
    if (configz.nodePortAddresses.length > 0) return []; // already where nftables mode will listen
    const primaries = primaryAddresses(addresses);
    const remedy =
      'Find who health-checks these ports on non-primary addresses (the cloud LB\'s target IPs, keepalived/HAProxy checks: `ss -tn state established "( sport = :PORT )"`, `conntrack -L -p tcp --dport PORT`); if any, set nodePortAddresses explicitly (e.g. ["0.0.0.0/0"] keeps today\'s reach, or the CIDRs they use) before switching';
    const hc = listeners.healthCheckPorts;
    if (!hc.known) {
      const nonPrimary = nodePortDestinations(addresses, primaries, new Set(), false).counted;
      if (nonPrimary.length === 0) return [];
      return [
        {
          id: "health-check-nodeports-shrink",
          severity: "warning",
          stage: "before",
          blocksMigration: false,
          title:
            "kube-proxy's health-check NodePorts could not be told apart: whether they stop answering on non-primary addresses after the switch is not known",
          evidence: {
            healthCheckNodePorts: `not read: ${hc.why}`,
            nonPrimaryAddresses: listed(
              nonPrimary.map((a) => `${a.address} (${a.interface})`),
              opts.maxListed,
            ),
          },
          remedy,
        },
      ];
    }
    const ports = new Set(hc.ports);
    const sockets = listeners.tcp.filter((s) => ports.has(s.port));
    const everywhere = sockets.filter((s) => EVERY_ADDRESS.has(s.address));
    const onNonPrimary = sockets.filter((s) => !EVERY_ADDRESS.has(s.address) && !primaries.has(s.address));
    if (everywhere.length === 0 && onNonPrimary.length === 0) return [];
    const used = listeners.conntrack.read
      ? listeners.conntrack.to.filter((c) => ports.has(c.port) && !primaries.has(c.address))
      : null;
    // A CNI's or Docker's address is no health-check destination unless connections arrive on it.
    const nonPrimary = nodePortDestinations(
      addresses,
      primaries,
      new Set((used ?? []).map((c) => c.address)),
      false,
    ).counted;
    if ((used ?? []).length === 0 && nonPrimary.length === 0 && onNonPrimary.length === 0) return [];
    const inUse = used !== null && used.length > 0;
    return [
      {
        id: "health-check-nodeports-shrink",
        severity: inUse ? "error" : "warning",
        stage: "before",
        blocksMigration: inUse,
        title: inUse
          ? `Health checks arrive on non-primary addresses of ${new Set(used.map((c) => c.port)).size} health-check NodePorts that nftables mode (nodePortAddresses: primary) stops answering there: the load balancer would see this node as down`
          : `${ports.size} health-check NodePorts answer on every address today and only on the primary ones in nftables mode`,
        evidence: {
          healthCheckNodePorts: [...ports].sort((a, b) => a - b),
          portsFrom: hc.source,
          primary: [...primaries],
          listeningOnEveryAddress: listed(
            everywhere.map((s) => shown(s.address, s.port)),
            opts.maxListed,
          ),
          listeningOnNonPrimary: listed(
            onNonPrimary.map((s) => shown(s.address, s.port)),
            opts.maxListed,
          ),
          nonPrimaryAddresses: listed(
            nonPrimary.map((a) => `${a.address} (${a.interface})`),
            opts.maxListed,
          ),
          connectionsOnNonPrimary:
            used === null
              ? `not read: ${listeners.conntrack.read ? "" : listeners.conntrack.why}`
              : listed(
                  used.map((c) => `${shown(c.address, c.port)} (${c.connections} connections)`),
                  opts.maxListed,
                ),
        },
        remedy,
      },
    ];
  },
});
