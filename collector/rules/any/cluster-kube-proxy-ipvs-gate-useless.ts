import { effectiveGates } from "../../checks/proxy-config.js";
import { deprecationStage } from "../../checks/timeline.js";
import { rule } from "../rule.js";

/** The KubeProxyIPVS gate set on a version where it no longer keeps ipvs mode alive. */
export const ipvsGateUseless = rule({
  findings: { "cluster-kube-proxy-ipvs-gate-useless": { severity: "error", stage: "any" } },
  needs: ["version", "kubeProxyConfigMap", "kubeProxyDaemonSet"],
  evaluate({ facts }) {
    const v = facts.version;
    const stage = deprecationStage(v);
    if (!("KubeProxyIPVS" in effectiveGates(facts)) || (stage !== "gate-removed" && stage !== "removed"))
      return [];
    return [
      {
        id: "cluster-kube-proxy-ipvs-gate-useless",
        severity: "error",
        stage: "any",
        blocksMigration: false,
        title: `KubeProxyIPVS is set, but on ${v?.gitVersion} ${stage === "removed" ? "the ipvs code is gone" : "the gate no longer exists"}`,
        evidence: { version: v?.gitVersion ?? null, stage },
        remedy: "Remove KubeProxyIPVS from featureGates and run nftables or iptables mode",
      },
    ];
  },
});
