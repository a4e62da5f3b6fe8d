import type { NodeReport, ViewSummary } from "../report/schema.js";
import { buildView, type NodeView } from "./build.js";
import { DEFAULT_RULE_OPTIONS, type RuleOptions } from "./options.js";

const MAX_NOT_COUNTED = 100;

export function summarize(v: NodeView): ViewSummary {
  return {
    runningMode: v.runningMode,
    kernelNftablesCapable: v.kernelNftablesCapable,
    hostNftNewEnough: v.hostNftNewEnough,
    blackHoledAddresses: v.blackHoled === null ? null : v.blackHoled.length,
    phaseInferred: v.inferred,
    // Bounded like every list in the report; the facts keep what each entry was drawn from.
    notCounted: v.notCounted.slice(0, MAX_NOT_COUNTED).map((n) => ({ ...n })),
    nodePortReach: v.nodePortReach,
    ipvsPlane: v.ipvsPlane,
    ipvsConnections: v.ipvsConnections,
  };
}

/** The view of a finished report, rebuilt from its facts (the one way every consumer gets it). */
export function viewOfReport(r: NodeReport, opts: RuleOptions = DEFAULT_RULE_OPTIONS): NodeView {
  const failed = new Map(
    r.probes.flatMap((p) => (p.ok || p.error === null ? [] : [[p.name, p.error] as const])),
  );
  return buildView(r.facts, failed, opts);
}

/** The carried summary; a report from an agent that predates it gets one rebuilt from its facts. */
export function summaryOf(r: NodeReport, rebuilt?: NodeView): ViewSummary {
  return r.view ?? summarize(rebuilt ?? viewOfReport(r));
}
