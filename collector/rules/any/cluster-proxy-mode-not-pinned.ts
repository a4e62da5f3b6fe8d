import { CONFIG_SOURCE_NEEDS, configSource, sourceRemedy } from "../../checks/config-source.js";
import { rule } from "../rule.js";

/** Only a source that was read and names no mode is "not pinned": unread or elsewhere is not empty. */
export const modeNotPinned = rule({
  findings: { "cluster-proxy-mode-not-pinned": { severity: "warning", stage: "any" } },
  needs: [...CONFIG_SOURCE_NEEDS, "observed"],
  evaluate({ facts, observed }) {
    const src = configSource(facts, observed);
    if (src.pin !== "not-pinned") return [];
    const cfg = facts.kubeProxyConfigMap?.config;
    return [
      {
        id: "cluster-proxy-mode-not-pinned",
        severity: "warning",
        stage: "any",
        blocksMigration: false,
        title:
          "kube-proxy's mode is not pinned: it follows upstream's default, which a future release changes from iptables to nftables",
        evidence: {
          where: src.where,
          configMapMode: src.kind === "configmap" && cfg ? (cfg.mode ?? "(absent)") : null,
          proxyModeFlag: facts.kubeProxyDaemonSet?.proxyModeFlag ?? null,
          distribution: src.distribution,
        },
        remedy: `Pin it today (nftables, or the mode you mean to stay on): ${sourceRemedy(src)}`,
      },
    ];
  },
});
