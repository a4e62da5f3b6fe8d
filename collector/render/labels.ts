import type { PlanStatus, FleetNode } from "../report/schema.js";

// Shared wording for every renderer, so the table, Markdown and HTML say the same thing.
export const STATUS_MARK: Record<PlanStatus, string> = {
  done: "done",
  todo: "todo",
  blocked: "blocked",
  "n/a": "n/a",
};

export function nodeNote(n: FleetNode): string {
  if (n.outcome !== "ok") return `${n.outcome}: ${n.reason ?? ""}`;
  const parts: string[] = [];
  if (n.listedByApi === false) parts.push("not listed by the API");
  if (n.reason) parts.push(n.reason);
  if (n.failedProbes.length > 0) parts.push(`failed probes: ${n.failedProbes.join(", ")}`);
  return parts.join("; ");
}

const RANK = { critical: 0, error: 1, warning: 2, info: 3 } as const;

export function worstFindings(n: FleetNode, max = 3): string {
  const ids = [...n.findings].sort((a, b) => RANK[a.severity] - RANK[b.severity]).map((f) => f.id);
  return ids.length > max ? `${ids.slice(0, max).join(", ")} +${ids.length - max}` : ids.join(", ");
}

export function phaseOf(n: FleetNode): string {
  return n.phase ?? "no-report";
}
export function verdictOf(n: FleetNode): string {
  return n.verdict ?? "no-report";
}
