import { CONFIG_SOURCE_NEEDS, configKubeProxyReads } from "../../checks/config-source.js";
import { configuredMode } from "../../checks/proxy-config.js";
import { rule } from "../rule.js";

/** The ipvs block or strictARP still in the config once the mode is not ipvs: dead config that misleads. */
export const ipvsBlockLeft = rule({
  findings: {
    "cluster-ipvs-config-left": { severity: "info", stage: "after", tags: ["config-after-switch"] },
  },
  needs: CONFIG_SOURCE_NEEDS,
  evaluate({ facts }) {
    const mode = configuredMode(facts);
    // Only the ConfigMap kube-proxy reads: another one's ipvs block is not kube-proxy's config.
    const ipvs = configKubeProxyReads(facts)?.ipvs;
    if (mode === "ipvs" || !ipvs || ipvs.keys.length === 0) return [];
    return [
      {
        id: "cluster-ipvs-config-left",
        severity: "info",
        stage: "after",
        blocksMigration: false,
        title: `The ipvs block is still in kube-proxy's config (${ipvs.keys.join(", ")}) although the mode is ${mode ?? "not pinned"}`,
        evidence: { keys: ipvs.keys, scheduler: ipvs.scheduler, strictARP: ipvs.strictARP },
        remedy: `Delete the whole ipvs: block (scheduler, strictARP, ...) from ConfigMap ${facts.kubeProxyConfigMap?.name ?? "kube-proxy"} (key ${facts.kubeProxyConfigMap?.key ?? "config.conf"}), and from kubeadm's cluster configuration if kubeadm manages it`,
      },
    ];
  },
});
