import { CONFIG_SOURCE_NEEDS } from "../../checks/config-source.js";
import type { Finding } from "../../../agent/contract.js";
import { configuredMode, effectiveGates } from "../../checks/proxy-config.js";
import type { TargetNode, TargetVersion } from "../../checks/target-version.js";
import type { ClusterFacts } from "../../report/cluster-facts.js";
import { flagRule } from "../rule.js";

// KEP-5495 as planned in kubernetes/enhancements#6120: the KubeProxyIPVS gate is on by default from 1.37,
// off by default from 1.40, locked off from 1.43 (ipvs mode no longer available); asked for ipvs mode with
// the gate off, kube-proxy fails to start (danwinship in that review: "just like if you said
// --proxy-mode=userspace"). The gate itself is removed in 1.46, after which a config naming it is refused.
function ipvsAt(minor: number, gate: boolean | undefined): { breaks: boolean; why: string } | null {
  if (minor >= 43)
    return { breaks: true, why: "ipvs mode is no longer available: kube-proxy fails to start" };
  if (minor >= 40) {
    return gate === true
      ? { breaks: false, why: "runs only because KubeProxyIPVS=true is set, until 1.43" }
      : { breaks: true, why: "KubeProxyIPVS is off by default: kube-proxy in ipvs mode fails to start" };
  }
  if (minor >= 37) {
    return gate === false
      ? { breaks: true, why: "KubeProxyIPVS=false is set: kube-proxy in ipvs mode fails to start" }
      : { breaks: false, why: "behind the KubeProxyIPVS gate, still on by default" };
  }
  return null;
}

/** What happens at `target` to the nodes and to the cluster's kube-proxy configuration. */
function atTarget(target: TargetVersion, nodes: readonly TargetNode[], cluster: ClusterFacts | null) {
  const gates = cluster ? effectiveGates(cluster) : {};
  const gate = gates["KubeProxyIPVS"];
  const ipvs = nodes.filter((n) => n.phase === "ipvs").map((n) => n.node);
  const node = ipvsAt(target.minor, gate);
  const configIpvs = cluster !== null && configuredMode(cluster) === "ipvs";
  return {
    gate,
    node,
    breaking: node?.breaks ? ipvs : [],
    atRisk: node && !node.breaks ? ipvs : [],
    unknown: nodes.filter((n) => n.phase === null).map((n) => n.node),
    configIpvs,
    configBreaks: configIpvs && (node?.breaks ?? false),
    gateRefused: target.minor >= 46 && "KubeProxyIPVS" in gates,
  };
}

function describe(at: ReturnType<typeof atTarget>): string[] {
  const { breaking, atRisk, node, unknown } = at;
  return [
    breaking.length > 0 ? `${breaking.length} node(s) in ipvs mode break: ${node!.why}` : null,
    atRisk.length > 0 ? `${atRisk.length} node(s) in ipvs mode keep working: ${node!.why}` : null,
    at.configBreaks
      ? "the kube-proxy configuration still says mode: ipvs, so every kube-proxy (re)start fails"
      : null,
    at.gateRefused
      ? "the configuration names KubeProxyIPVS, a gate removed in 1.46: kube-proxy refuses it"
      : null,
    unknown.length > 0 ? `${unknown.length} node(s) did not answer: unknown` : null,
  ].filter((p): p is string => p !== null);
}

/**
 * What breaks on each node and in the cluster's kube-proxy configuration when the cluster reaches
 * `--target-version`, like kubent's. A node that did not answer is listed as unknown, never as unaffected.
 */
export const targetVersionRule = flagRule({
  findings: { "cluster-target-version": { severity: ["critical", "warning", "info"], stage: "any" } },
  needs: ["targetVersion", "phases", ...CONFIG_SOURCE_NEEDS],
  evaluate({ targetVersion: target, phases, facts }) {
    const at = atTarget(target, phases, facts);
    const { breaking, atRisk, unknown } = at;
    const breaks = breaking.length > 0 || at.configBreaks || at.gateRefused;
    const severity: Finding["severity"] = breaks
      ? "critical"
      : atRisk.length > 0 || unknown.length > 0
        ? "warning"
        : "info";
    const parts = describe(at);
    return [
      {
        id: "cluster-target-version",
        severity,
        stage: "any",
        blocksMigration: false,
        title: `At Kubernetes ${target.text}: ${parts.length > 0 ? parts.join("; ") : "nothing proxyscope checks breaks"}`,
        evidence: {
          targetVersion: target.text,
          nodesThatBreak: breaking.slice(0, 50),
          nodesThatBreakCount: breaking.length,
          nodesAtRisk: atRisk.slice(0, 50),
          nodesAtRiskCount: atRisk.length,
          nodesUnknown: unknown.slice(0, 50),
          nodesUnknownCount: unknown.length,
          configuredModeIpvs: at.configIpvs,
          KubeProxyIPVS: at.gate ?? null,
        },
        remedy: breaks
          ? `Move these nodes and the configuration off ipvs mode before upgrading to ${target.text}: follow the plan below`
          : atRisk.length > 0
            ? "Plan the move off ipvs mode before the next stage of KEP-5495"
            : "Nothing to do for ipvs mode at this version",
      },
    ];
  },
});
