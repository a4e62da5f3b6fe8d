import type { ProbeError } from "../facts/probe-error.js";
import type { Finding, NodeFacts, Verdict } from "../report/schema.js";
import { buildView, type NodeView } from "../view/build.js";
import { DEFAULT_RULE_OPTIONS, type RuleOptions } from "../view/options.js";
import { RULES, type FindingId } from "./catalogue.js";
import { findingPageUrl } from "../../common/finding-page.js";
import type { JudgedFinding, PreviousScan, Rule } from "./rule.js";
import { decideVerdict } from "./verdict.js";

interface Judgement {
  view: NodeView;
  findings: JudgedFinding<FindingId>[];
  verdict: Verdict;
}

const SEVERITY_ORDER = { critical: 0, error: 1, warning: 2, info: 3 } as const;

/** Every rule over one view of the facts, then the verdict. Pure. */
function judgeView(
  facts: NodeFacts,
  view: NodeView,
  failedProbes: ReadonlyMap<string, ProbeError>,
  now: number,
  opts: RuleOptions = DEFAULT_RULE_OPTIONS,
  previous: PreviousScan | null = null,
): Judgement {
  const input = { facts, view, failedProbes, now, previous };
  // Each finding's reference is its page, derived from the id so no rule can point elsewhere.
  const findings = (RULES as readonly Rule<FindingId>[])
    .flatMap((r) => r.evaluate(input, opts))
    .map((f): JudgedFinding<FindingId> => ({ ...f, reference: findingPageUrl(f.id) }));
  findings.sort(
    (a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || a.id.localeCompare(b.id),
  );
  return { view, findings, verdict: decideVerdict(view.phase, findings as Finding[], view.inferred) };
}

/** The view, the findings and the verdict for these facts. */
export function judge(
  facts: NodeFacts,
  failedProbes: ReadonlyMap<string, ProbeError>,
  now: number,
  opts: RuleOptions = DEFAULT_RULE_OPTIONS,
  previous: PreviousScan | null = null,
): Judgement & Pick<NodeView, "phase" | "source" | "mixed"> {
  const view = buildView(facts, failedProbes, opts);
  const j = judgeView(facts, view, failedProbes, now, opts, previous);
  return { ...j, phase: view.phase, source: view.source, mixed: view.mixed };
}
