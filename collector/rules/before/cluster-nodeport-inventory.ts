import { SAMPLE, serviceInventory } from "../../checks/services.js";
import { CONFIG_SOURCE_NEEDS, configSource, nodePortAddressesInUse } from "../../checks/config-source.js";
import { rule } from "../rule.js";

export const nodePortInventory = rule({
  findings: { "cluster-nodeport-inventory": { severity: ["warning", "info"], stage: "before" } },
  needs: ["services", ...CONFIG_SOURCE_NEEDS],
  evaluate({ facts }) {
    const nodePorts = serviceInventory(facts).nodePorts;
    if (nodePorts.length === 0) return [];
    // From the config kube-proxy reads, or its flags; not read is not "unset".
    const npa = nodePortAddressesInUse(facts);
    const n = nodePorts.length;
    return [
      {
        id: "cluster-nodeport-inventory",
        // Not read may be unset: the warning stays, the claim goes.
        severity: npa === null || npa.length === 0 ? "warning" : "info",
        stage: "before",
        blocksMigration: false,
        title:
          npa === null
            ? `${n} NodePort(s); kube-proxy's nodePortAddresses was not read (its config: ${configSource(facts).where}): unset, it lets them answer on every node address, where nftables mode serves them on the primary address only`
            : npa.length === 0
              ? `${n} NodePort(s) answer on every node address today; nftables mode serves them on the primary address only`
              : `${n} NodePort(s); nodePortAddresses is ${npa.join(", ")}`,
        evidence: {
          nodePortAddresses: npa,
          nodePorts: [...new Set(nodePorts.map((p) => `${p.nodePort}/${p.protocol}`))].slice(0, SAMPLE),
          count: nodePorts.length,
        },
        remedy:
          "Before the switch, find out whether anything reaches these NodePorts on a secondary address, a VIP or 127.0.0.1 (the node reports' nodeport-addresses-shrink and localhost counters say); if so set nodePortAddresses explicitly",
      },
    ];
  },
});
