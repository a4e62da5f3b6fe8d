import { busyAddresses, classifyNodePortAddresses, primaryAddresses } from "../../view/not-counted.js";
import { BEFORE_SWITCH, listed, nextModeIsIptables, rule } from "../rule.js";

export const nodePortsOnSecondaryAddresses = rule({
  findings: {
    "nodeport-addresses-shrink": {
      severity: ["warning", "error"],
      stage: "before",
      tags: ["measure-before-switch"],
    },
  },
  needs: ["addresses", "configz", "ipvs", "kubeIpvs0", "ipsets"],
  evaluate({ facts, view }, opts) {
    const { phase, virtualServers } = view;
    // Below 5.13 the node's next mode is iptables, which keeps NodePorts on every address (nodePortAddresses
    // defaults to primary in nftables mode only: cmd/kube-proxy/app/server_linux.go platformApplyDefaults).
    if (!BEFORE_SWITCH.has(phase) || !facts.addresses || nextModeIsIptables(view)) return [];
    const configured = facts.configz?.nodePortAddresses ?? [];
    if (configured.length > 0) return []; // already restricted; nothing shrinks unexpectedly
    const { primary } = facts.addresses;
    const primaries = primaryAddresses(facts.addresses);
    const onSecondary = virtualServers.nodePorts.filter(
      (v) => v.address !== null && !primaries.has(v.address) && v.address !== "127.0.0.1",
    );
    const busy = onSecondary.filter((v) => v.activeConns + v.inactiveConns > 0);
    // A CNI's, Docker's or a DNS cache's address is no NodePort destination unless traffic says otherwise.
    const { counted, notCounted } = classifyNodePortAddresses(
      facts.addresses,
      primaries,
      busyAddresses(busy),
    );
    if (counted.length === 0 && busy.length === 0) return [];
    const countedIPs = new Set(counted.map((c) => c.split(" ")[0]));
    const quietCounted = onSecondary.filter((v) => countedIPs.has(v.address as string));
    const guessed = new Set(virtualServers.nodePortsGuessed);
    const named = [...new Set([...quietCounted, ...busy])];
    const guesses = named.filter((v) => guessed.has(v)).length;
    return [
      {
        id: "nodeport-addresses-shrink",
        severity: busy.length > 0 ? "error" : "warning",
        stage: "before",
        blocksMigration: false,
        title:
          busy.length > 0
            ? `NodePorts carry traffic on ${busy.length} non-primary address:port pairs that nftables mode (nodePortAddresses: primary) stops serving`
            : `${counted.length} local addresses besides the primary ones will stop serving NodePorts in nftables mode`,
        evidence: {
          primary: [...primaries],
          primarySource: primary.source,
          secondaryAddresses: listed(counted, opts.maxListed),
          nodePortVirtualServersOnSecondary: named.length,
          // Which virtual servers are NodePorts: proven by kube-proxy's own sets, or only guessed by the range.
          nodePortsFrom:
            named.length === 0
              ? "no NodePort virtual server on these addresses"
              : guesses === 0
                ? "kube-proxy's KUBE-NODE-PORT-* ipsets (ipvs mode's own list of NodePorts)"
                : `${guesses} of ${named.length} only by the port range ${opts.nodePortRange.join("-")}: a guess, kube-proxy's KUBE-NODE-PORT-* ipsets were not read for them (a foreign virtual server on such a port would be counted here)`,
          withConnections: listed(
            busy.map(
              (v) =>
                `${v.protocol} ${v.address}:${v.port} (${v.activeConns} active, ${v.inactiveConns} inactive)`,
            ),
            opts.maxListed,
          ),
          notCounted: listed(
            notCounted.map((n) => `${n.seen}: ${n.why}`),
            opts.maxListed,
          ),
        },
        remedy:
          'Inventory who reaches NodePorts on these addresses; if they must keep working set nodePortAddresses explicitly (e.g. ["0.0.0.0/0"] restores the old reach) before switching',
      },
    ];
  },
});
