import { EXIT } from "../../common/exit-codes.js";
import { terminalSafe as safe } from "../../common/escape.js";
import type { CleanupOutcome, ScanSummary } from "./schema.js";

function summary(label: string, s: ScanSummary): string {
  const findings = s.findings.length === 0 ? "no findings" : s.findings.join(", ");
  return `${label}: verdict ${s.verdict} (phase ${s.phase}): ${findings}`;
}

/** The cleanup for a person: every action as the command they would type, and what stays and why. */
export function renderCleanup(o: CleanupOutcome): string {
  const out: string[] = [];
  const head = {
    "dry-run": "dry run: nothing was changed; run with --apply to carry out these actions",
    refused: "REFUSED: nothing was changed",
    applied: "applied",
  }[o.mode];
  out.push(`proxyscope-agent cleanup on node ${safe(o.node)}: ${head}`);
  if (o.refusal !== null) out.push(`  ${safe(o.refusal)}`);
  out.push(safe(summary("before", o.before)));
  out.push("");
  if (o.mode === "applied") {
    out.push(`actions (${o.results.length}):`);
    for (const r of o.results)
      out.push(
        r.ok
          ? `  ok    ${safe(r.action.command)}`
          : `  FAIL  ${safe(r.action.command)}\n        ${safe(r.error ?? "")}`,
      );
  } else {
    out.push(
      `${o.mode === "refused" ? "would have run" : "would run"} (${o.plan.actions.length}):`,
      ...o.plan.actions.map((a) => `  ${safe(a.command)}`),
    );
  }
  // "Nothing to remove" only when every part was read; otherwise what was not read is unknown.
  if (o.plan.actions.length === 0)
    out.push(o.plan.unread.length === 0 ? "  (nothing to remove)" : "  (none in what could be read)");
  if (o.plan.unread.length > 0) {
    out.push("", `NOT READ, so unknown and not touched (${o.plan.unread.length}):`);
    for (const k of o.plan.unread) out.push(`  ${safe(k.what)}: ${safe(k.why)}`);
  }
  if (o.plan.kept.length > 0) {
    out.push("", `left alone (${o.plan.kept.length}):`);
    for (const k of o.plan.kept) out.push(`  ${safe(k.what)}: ${safe(k.why)}`);
  }
  if (o.after !== null) out.push("", safe(summary("after", o.after)));
  return out.join("\n");
}

/** 0: dry run, or every action succeeded; 1: an action failed; 4: refused by the interlock. */
export function cleanupExitCode(o: CleanupOutcome): number {
  if (o.mode === "refused") return EXIT.refused;
  return o.results.every((r) => r.ok) ? EXIT.ok : EXIT.findings;
}
