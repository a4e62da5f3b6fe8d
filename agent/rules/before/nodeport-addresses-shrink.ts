import { REF } from "../references.js";
import { BEFORE_SWITCH, listed, rule } from "../rule.js";

export const nodePortsOnSecondaryAddresses = rule({
  findings: {
    "nodeport-addresses-shrink": {
      severity: ["warning", "error"],
      stage: "before",
      tags: ["measure-before-switch"],
    },
  },
  needs: ["addresses", "configz", "ipvs", "kubeIpvs0"],
  evaluate({ facts, view: { phase, virtualServers } }, opts) {
    if (!BEFORE_SWITCH.has(phase) || !facts.addresses) return [];
    const configured = facts.configz?.nodePortAddresses ?? [];
    if (configured.length > 0) return []; // already restricted; nothing shrinks unexpectedly
    const { primary } = facts.addresses;
    const primaries = new Set([primary.ipv4, primary.ipv6].filter((x): x is string => x !== null));
    const secondary = facts.addresses.interfaces
      .filter((i) => i.name !== "kube-ipvs0" && i.name !== "lo")
      .flatMap((i) =>
        i.addresses
          .filter((a) => a.scope === "global" && !primaries.has(a.address))
          .map((a) => `${a.address} (${i.name})`),
      );
    if (secondary.length === 0) return [];
    const onSecondary = virtualServers.nodePorts.filter(
      (v) => v.address !== null && !primaries.has(v.address) && v.address !== "127.0.0.1",
    );
    const busy = onSecondary.filter((v) => v.activeConns + v.inactiveConns > 0);
    return [
      {
        id: "nodeport-addresses-shrink",
        severity: busy.length > 0 ? "error" : "warning",
        stage: "before",
        blocksMigration: false,
        title:
          busy.length > 0
            ? `NodePorts carry traffic on ${busy.length} non-primary address:port pairs that nftables mode (nodePortAddresses: primary) stops serving`
            : `${secondary.length} local addresses besides the primary ones will stop serving NodePorts in nftables mode`,
        evidence: {
          primary: [...primaries],
          primarySource: primary.source,
          secondaryAddresses: listed(secondary, opts.maxListed),
          nodePortVirtualServersOnSecondary: onSecondary.length,
          withConnections: listed(
            busy.map(
              (v) =>
                `${v.protocol} ${v.address}:${v.port} (${v.activeConns} active, ${v.inactiveConns} inactive)`,
            ),
            opts.maxListed,
          ),
        },
        remedy:
          'Inventory who reaches NodePorts on these addresses; if they must keep working set nodePortAddresses explicitly (e.g. ["0.0.0.0/0"] restores the old reach) before switching',
        reference: REF.nodePortAddresses,
      },
    ];
  },
});
