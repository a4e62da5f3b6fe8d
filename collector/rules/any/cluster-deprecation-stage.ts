import { CONFIG_SOURCE_NEEDS } from "../../checks/config-source.js";
import type { Finding } from "../../../agent/contract.js";
import { configuredMode } from "../../checks/proxy-config.js";
import { deprecationStage } from "../../checks/timeline.js";
import type { DeprecationStage } from "../../report/schema.js";
import { rule } from "../rule.js";

const WHAT: Record<DeprecationStage, string> = {
  "before-deprecation":
    "ipvs mode is not deprecated yet on this version (warning from 1.35, off by default in 1.40, removed in 1.43)",
  warning:
    "kube-proxy logs the deprecation as an error and nodes get an IPVSDeprecation warning event in ipvs mode (1.35+)",
  gated: "ipvs mode sits behind the KubeProxyIPVS gate, still on by default (1.37+); off by default in 1.40",
  "off-by-default":
    "KubeProxyIPVS is off by default (1.40+): kube-proxy in ipvs mode exits unless the gate is set; removed in 1.43",
  removed: "pkg/proxy/ipvs is removed (1.43+): kube-proxy cannot run in ipvs mode at all",
  "gate-removed":
    "ipvs mode is gone and the KubeProxyIPVS gate itself is removed (1.46+): a config naming it is rejected",
  unknown: "the cluster version is unknown",
};

function severityAt(stage: DeprecationStage, ipvsInUse: boolean): Finding["severity"] {
  if (!ipvsInUse) return "info";
  if (stage === "removed" || stage === "gate-removed") return "critical";
  if (stage === "off-by-default") return "error";
  return stage === "before-deprecation" ? "info" : "warning";
}

/** Where the cluster's version stands in KEP-5495, and how much that matters while ipvs runs. */
export const deprecationStageRule = rule({
  findings: {
    "cluster-deprecation-stage": { severity: ["info", "warning", "error", "critical"], stage: "any" },
  },
  needs: ["version", ...CONFIG_SOURCE_NEEDS, "observed"],
  evaluate({ facts, observed }) {
    const v = facts.version;
    const stage = deprecationStage(v);
    if (stage === "unknown") return [];
    const ipvsInUse = configuredMode(facts) === "ipvs" || observed.some((o) => o.phase === "ipvs");
    return [
      {
        id: "cluster-deprecation-stage",
        severity: severityAt(stage, ipvsInUse),
        stage: "any",
        blocksMigration: false,
        title: `Kubernetes ${v?.gitVersion}: ${WHAT[stage]}`,
        evidence: { version: v?.gitVersion ?? null, stage, ipvsInUse },
        remedy: ipvsInUse
          ? "Move off ipvs mode before 1.40 (off by default) and 1.43 (removed): follow the plan below"
          : "Nothing runs ipvs mode; keep the mode pinned so an upgrade cannot change it",
      },
    ];
  },
});
