import { AFTER_CONFIG_IDS } from "../../agent/contract.js";
import { CLUSTER_AFTER_CONFIG_IDS } from "../rules/catalogue.js";
import type { PlanStep } from "../report/schema.js";
import { names, type FleetState } from "./fleet-state.js";

/** Step 5: remove the ipvs block and strictARP, only once no node can still be on ipvs. */
export function removeIpvsConfigStep(s: FleetState): PlanStep {
  const blockLeft = s.clusterFindings.some((f) => CLUSTER_AFTER_CONFIG_IDS.has(f.id));
  const sysctlsLeft = s.answered.filter((n) => n.findings.some((f) => AFTER_CONFIG_IDS.has(f.id)));
  const stillIpvs = s.answered.filter((n) => n.phase === "ipvs");
  const cm = s.cluster?.kubeProxyConfigMap;
  return {
    step: 5,
    id: "remove-ipvs-config",
    title: "Remove the ipvs block and strictARP (and in kubeadm's configuration)",
    status: !s.kubeProxyAnywhere
      ? "n/a"
      : s.ipvsLeft || s.noReport.length > 0
        ? "blocked"
        : blockLeft || sysctlsLeft.length > 0
          ? "todo"
          : "done",
    detail: s.ipvsLeft
      ? `Only after every node has left ipvs (${stillIpvs.length} still on it${s.mode === "ipvs" ? ", and the config still says ipvs" : ""})`
      : s.noReport.length > 0
        ? `${s.noReport.length} node(s) unanswered: cannot tell whether any still runs ipvs`
        : blockLeft
          ? `The ipvs: block is still in ConfigMap ${cm?.name ?? "kube-proxy"} (key ${cm?.key ?? "config.conf"}): delete it`
          : sysctlsLeft.length > 0
            ? "strictARP sysctls still set on some nodes (harmless; reset to stock when convenient)"
            : "No ipvs configuration left",
    nodes: names(s.ipvsLeft ? stillIpvs : sysctlsLeft),
  };
}
