import { SEVERITIES, type Finding } from "../../agent/contract.js";
import type { ClusterFacts } from "../report/cluster-facts.js";
import { kernelsTooOld } from "./kernels.js";
import { configSourceFinding } from "./config-source.js";
import * as cfg from "./proxy-config.js";
import { serviceFindings } from "./services.js";
import { withPages } from "./references.js";
import { timelineFinding } from "./timeline.js";

export { configSource } from "./config-source.js";
export { configuredMode, effectiveGates, type ObservedPhase } from "./proxy-config.js";

/** Every cluster check, in one place; each is pure. Findings come back worst first. */
export function clusterChecks(facts: ClusterFacts, observed: readonly cfg.ObservedPhase[]): Finding[] {
  const ipvsInUse = cfg.configuredMode(facts) === "ipvs" || observed.some((o) => o.phase === "ipvs");
  const findings = [
    ...cfg.noKubeProxy(facts, observed),
    ...configSourceFinding(facts, observed),
    ...cfg.modeNotPinned(facts, observed),
    ...cfg.ipvsConfigured(facts),
    ...cfg.ipvsBlockLeft(facts),
    ...cfg.featureGates(facts),
    ...cfg.configDisagreement(facts, observed),
    ...cfg.kubeadmCaveat(facts),
    ...cfg.rolloutNotCanarySafe(facts),
    ...kernelsTooOld(facts.nodes),
    ...serviceFindings(facts),
    ...timelineFinding(facts.version, ipvsInUse, "KubeProxyIPVS" in cfg.effectiveGates(facts)),
  ];
  return withPages(findings).sort((a, b) => SEVERITIES.indexOf(b.severity) - SEVERITIES.indexOf(a.severity));
}
