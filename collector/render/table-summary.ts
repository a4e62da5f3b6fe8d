import { terminalSafe as safe } from "../../common/escape.js";
import type { FleetReport } from "../report/schema.js";
import { scopeLines } from "../report/scope.js";
import { configuredModeLabel } from "./labels.js";
import { VERDICT_TONE, type Paint, type Tone } from "./table-layout.js";

/** The table's head: the scope first, then the fleet's counts and, when compared, its parity. */
export function summaryLines(r: FleetReport, c: Paint): string[] {
  const s = r.summary;
  const cl = r.cluster;
  const counts = (m: Record<string, number>, tone: (k: string) => Tone) =>
    Object.entries(m)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${c(tone(k), k)} ${v}`)
      .join("  ") || "none";
  return [
    // A preflight or a demo says so before anything that could be read as the fleet's state.
    ...(r.scope ? [...scopeLines(r.scope).map((l, i) => (i === 0 ? c("meh", safe(l)) : safe(l))), ""] : []),
    c(
      "bold",
      `proxyscope fleet report — ${s.nodes} node(s), ${s.answered} answered${s.unanswered ? `, ${s.unanswered} without a report` : ""}`,
    ) + (r.partial ? `  ${c("bad", "PARTIAL: counts are a lower bound")}` : ""),
    [
      `cluster ${cl.version ? safe(cl.version.gitVersion) : "version unknown"}`,
      `deprecation stage: ${cl.deprecationStage}`,
      `configured mode: ${cl.configuredMode ? safe(cl.configuredMode) : c("meh", safe(configuredModeLabel(cl)))}`,
      cl.kubeadm ? "kubeadm" : null,
      `source: ${r.source}`,
    ]
      .filter(Boolean)
      .join(" · "),
    `phases:   ${counts(s.byPhase, (k) => (k === "no-report" ? "bad" : "bold"))}`,
    `verdicts: ${counts(s.byVerdict, (k) => VERDICT_TONE[k] ?? "dim")}`,
    ...parityLines(s.parity, c),
    "",
  ];
}

function parityLines(p: FleetReport["summary"]["parity"], c: Paint): string[] {
  const out: string[] = [];
  if (p && (p.byState.compared ?? 0) > 0)
    out.push(
      `parity:   ${p.same} same  ${c(p.missingAfter > 0 ? "bad" : "dim", `${p.missingAfter} lost`)}  ${p.endpointsDiffer} endpoints differ` +
        (p.nodesWithLost.length > 0 ? `  (lost on ${p.nodesWithLost.map(safe).join(", ")})` : ""),
    );
  const bv = p?.byVerdict ?? {};
  const n = (v: string) => bv[v] ?? 0;
  const confirmedOn = p?.nodesWithConfirmedLoss ?? [];
  if (Object.values(bv).some((v) => v > 0))
    out.push(
      `  vs API: ${c(n("confirmed-loss") > 0 ? "bad" : "dim", `${n("confirmed-loss")} confirmed lost`)}  ${c(n("real-loss") > 0 ? "bad" : "dim", `${n("real-loss")} endpoints lost`)}  ${n("churn")} churn  ${n("explained")} explained  ${c(n("not-confirmed") > 0 ? "meh" : "dim", `${n("not-confirmed")} not confirmed`)}` +
        (confirmedOn.length > 0 ? `  (on ${confirmedOn.map(safe).join(", ")})` : ""),
    );
  return out;
}
