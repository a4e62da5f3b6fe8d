import { SAMPLE, serviceInventory } from "../../checks/services.js";
import { rule } from "../rule.js";

export const nodePortInventory = rule({
  findings: { "cluster-nodeport-inventory": { severity: ["warning", "info"], stage: "before" } },
  needs: ["services", "kubeProxyConfigMap"],
  evaluate({ facts }) {
    const nodePorts = serviceInventory(facts).nodePorts;
    if (nodePorts.length === 0) return [];
    const npa = facts.kubeProxyConfigMap?.config?.nodePortAddresses ?? null;
    const unrestricted = npa === null || npa.length === 0;
    return [
      {
        id: "cluster-nodeport-inventory",
        severity: unrestricted ? "warning" : "info",
        stage: "before",
        blocksMigration: false,
        title: unrestricted
          ? `${nodePorts.length} NodePort(s) answer on every node address today; nftables mode serves them on the primary address only`
          : `${nodePorts.length} NodePort(s); nodePortAddresses is ${npa!.join(", ")}`,
        evidence: {
          nodePortAddresses: npa ?? [],
          nodePorts: [...new Set(nodePorts.map((p) => `${p.nodePort}/${p.protocol}`))].slice(0, SAMPLE),
          count: nodePorts.length,
        },
        remedy:
          "Before the switch, find out whether anything reaches these NodePorts on a secondary address, a VIP or 127.0.0.1 (the node reports' nodeport-addresses-shrink and localhost counters say); if so set nodePortAddresses explicitly",
      },
    ];
  },
});
