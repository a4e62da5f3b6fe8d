import type { Severity } from "../../report/schema.js";
import { versionParts } from "../../parse/versions.js";
import { rule } from "../rule.js";

export const deprecationStage = rule({
  findings: {
    "ipvs-mode-deprecated": {
      severity: ["info", "warning", "error", "critical"],
      stage: "any",
      tags: ["why-move"],
    },
  },
  needs: ["kubeProxyMetrics", "configz"],
  evaluate({ facts, view: { phase } }) {
    if (phase !== "ipvs") return [];
    const v = versionParts(facts.kubeProxyMetrics?.gitVersion);
    if (!v) return [];
    const minor = v[0] === 1 ? v[1]! : 99;
    const gate = facts.configz?.featureGates["KubeProxyIPVS"];
    const [severity, text]: [Severity, string] =
      minor >= 43
        ? ["critical", "ipvs mode is removed in 1.43"]
        : minor >= 40
          ? [
              "error",
              `ipvs mode is off by default since 1.40 and runs only because KubeProxyIPVS=${gate ?? "?"}; it is removed in 1.43`,
            ]
          : minor >= 37
            ? [
                "warning",
                "ipvs mode is behind the KubeProxyIPVS gate (on by default) since 1.37; off by default in 1.40, removed in 1.43",
              ]
            : minor >= 35
              ? [
                  "warning",
                  "kube-proxy logs the ipvs deprecation as an error and posts an IPVSDeprecation warning event since 1.35; off by default in 1.40, removed in 1.43",
                ]
              : ["info", "ipvs mode is deprecated (KEP-5495): off by default in 1.40, removed in 1.43"];
    return [
      {
        id: "ipvs-mode-deprecated",
        severity,
        stage: "any",
        blocksMigration: false,
        title: `kube-proxy ${facts.kubeProxyMetrics?.gitVersion} runs ipvs mode: ${text}`,
        evidence: {
          kubeProxyVersion: facts.kubeProxyMetrics?.gitVersion ?? null,
          KubeProxyIPVS: gate ?? null,
        },
        remedy: "Plan the move to nftables mode (or iptables mode where the kernel is older than 5.13)",
      },
    ];
  },
});
