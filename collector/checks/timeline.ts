import type { Finding } from "../../agent/contract.js";
import type { ClusterVersion } from "../report/cluster-facts.js";
import type { DeprecationStage } from "../report/schema.js";
import type { CheckFinding } from "./references.js";

/** KEP-5495's stages by minor release (Kubernetes 1.x). */
export function deprecationStage(v: ClusterVersion | null): DeprecationStage {
  if (!v || v.major !== 1) return "unknown";
  if (v.minor >= 46) return "gate-removed";
  if (v.minor >= 43) return "removed";
  if (v.minor >= 40) return "off-by-default";
  if (v.minor >= 37) return "gated";
  if (v.minor >= 35) return "warning";
  return "before-deprecation";
}

const WHAT: Record<DeprecationStage, string> = {
  "before-deprecation":
    "ipvs mode is not deprecated yet on this version (warning from 1.35, off by default in 1.40, removed in 1.43)",
  warning:
    "kube-proxy logs a deprecation warning and nodes get an IPVSDeprecation event in ipvs mode (1.35+)",
  gated: "ipvs mode sits behind the KubeProxyIPVS gate, still on by default (1.37+); off by default in 1.40",
  "off-by-default":
    "KubeProxyIPVS is off by default (1.40+): kube-proxy in ipvs mode exits unless the gate is set; removed in 1.43",
  removed: "pkg/proxy/ipvs is removed (1.43+): kube-proxy cannot run in ipvs mode at all",
  "gate-removed":
    "ipvs mode is gone and the KubeProxyIPVS gate itself is removed (1.46+): a config naming it is rejected",
  unknown: "the cluster version is unknown",
};

export function timelineFinding(
  v: ClusterVersion | null,
  ipvsInUse: boolean,
  ipvsGateSet: boolean,
): CheckFinding[] {
  const stage = deprecationStage(v);
  if (stage === "unknown") return [];
  const severity: Finding["severity"] = !ipvsInUse
    ? "info"
    : stage === "removed" || stage === "gate-removed"
      ? "critical"
      : stage === "off-by-default"
        ? "error"
        : stage === "before-deprecation"
          ? "info"
          : "warning";
  const out: CheckFinding[] = [
    {
      id: "cluster-deprecation-stage",
      severity,
      stage: "any",
      blocksMigration: false,
      title: `Kubernetes ${v?.gitVersion}: ${WHAT[stage]}`,
      evidence: { version: v?.gitVersion ?? null, stage, ipvsInUse },
      remedy: ipvsInUse
        ? "Move off ipvs mode before 1.40 (off by default) and 1.43 (removed): follow the plan below"
        : "Nothing runs ipvs mode; keep the mode pinned so an upgrade cannot change it",
    },
  ];
  if (ipvsGateSet && (stage === "gate-removed" || stage === "removed"))
    out.push({
      id: "cluster-kube-proxy-ipvs-gate-useless",
      severity: "error",
      stage: "any",
      blocksMigration: false,
      title: `KubeProxyIPVS is set, but on ${v?.gitVersion} ${stage === "removed" ? "the ipvs code is gone" : "the gate no longer exists"}`,
      evidence: { version: v?.gitVersion ?? null, stage },
      remedy: "Remove KubeProxyIPVS from featureGates and run nftables or iptables mode",
    });
  return out;
}
