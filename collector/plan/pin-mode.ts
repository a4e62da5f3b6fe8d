import { kubeProxyUnread, sourceRemedy } from "../checks/config-source.js";
import type { ConfigSource } from "../report/cluster-facts.js";
import type { PlanStep } from "../report/schema.js";
import type { FleetState } from "./fleet-state.js";

type Judged = Pick<PlanStep, "status" | "detail">;

/** Where kube-proxy really reads its mode, judged: pinned, pinned by a distribution, not pinned, or unknown. */
function judgeSource(src: ConfigSource, s: FleetState): Judged {
  if (src.pin === "pinned") return { status: "done", detail: `Pinned to ${src.mode}: ${src.where}` };
  if (src.pin === "distribution")
    return {
      status: "done",
      detail: `Pinned by ${src.distribution}: ${src.where}. To change it: ${sourceRemedy(src)}`,
    };
  if (src.pin === "not-pinned")
    return {
      status: "todo",
      detail: `${src.kind === "configmap" ? `mode: is empty in ${src.where}` : `Not pinned: ${src.where}`}. Pin it today (e.g. nftables): ${sourceRemedy(src)}`,
    };
  // Not read, or not in the API, is not "empty".
  const unread = s.cluster !== null && kubeProxyUnread(s.cluster);
  return {
    status: "todo",
    detail: `Unknown: ${unread ? "kube-proxy's config could not be read (see what was not read): " : ""}${src.where}`,
  };
}

/** Step 1: pin the mode, where kube-proxy really reads it. */
export function pinModeStep(s: FleetState): PlanStep {
  const judged: Judged = !s.kubeProxyAnywhere
    ? { status: "n/a", detail: "No kube-proxy in this cluster" }
    : s.src === null
      ? {
          status: "todo",
          detail: "Unknown without API access: check kube-proxy's mode: (or --proxy-mode) by hand",
        }
      : judgeSource(s.src, s);
  return { step: 1, id: "pin-mode", title: "Pin kube-proxy's mode, whichever it is", ...judged, nodes: [] };
}
