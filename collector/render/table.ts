import { findingPageUrl } from "../../common/finding-page.js";
import type { FleetReport, PlanStatus } from "../report/schema.js";
import { terminalSafe as safe } from "../../common/escape.js";
import { scopeLines } from "../report/scope.js";
import { acceptLines } from "../report/accept.js";
import { configuredModeLabel, nodeNote, phaseOf, verdictOf, worstFindings } from "./labels.js";

const SGR = {
  critical: "1;31",
  error: "31",
  warning: "33",
  info: "36",
  good: "32",
  bad: "31",
  meh: "33",
  dim: "2",
  bold: "1",
} as const;
type Tone = keyof typeof SGR;

const VERDICT_TONE: Record<string, Tone> = {
  ready: "good",
  clean: "good",
  attention: "meh",
  leftovers: "meh",
  blocked: "bad",
  unhealthy: "bad",
  unknown: "dim",
  "no-report": "bad",
};
const STATUS_TONE: Record<PlanStatus, Tone> = { done: "good", todo: "meh", blocked: "bad", "n/a": "dim" };

// Display width ignoring colour codes, so columns line up on a TTY too.
// eslint-disable-next-line no-control-regex
const width = (s: string) => [...s.replace(/\u001b\[[0-9;]*m/g, "")].length;
const cut = (s: string, n: number) => ([...s].length > n ? `${[...s].slice(0, n - 1).join("")}…` : s);

/**
 * A note too long for its column loses its URLs, not its reason: a failed read's reason is
 * "<url>: <why>", and the why is what the reader acts on (the URL stays in JSON and Markdown).
 */
function tableNote(note: string): string {
  if ([...note].length <= 80) return note;
  return note
    .replace(/https?:\/\/\S*?:?(?=\s|$)/g, "")
    .replace(/\s+/g, " ")
    .replace(/:\s*:/g, ":")
    .trim();
}

function table(head: string[], rows: string[][]): string[] {
  const w = head.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i] ?? ""))));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c + " ".repeat(w[i]! - width(c))))
      .join("  ")
      .trimEnd();
  return [line(head), ...rows.map(line)];
}

/** The report for a terminal; colour only when asked (the CLI asks on a TTY). */
export function renderTable(r: FleetReport, colour: boolean): string {
  const c = (t: Tone, s: string) => (colour ? `\u001b[${SGR[t]}m${s}\u001b[0m` : s);
  const out: string[] = [];
  const s = r.summary;
  // A preflight or a demo says so before anything that could be read as the fleet's state.
  if (r.scope) out.push(...scopeLines(r.scope).map((l, i) => (i === 0 ? c("meh", safe(l)) : safe(l))), "");
  out.push(
    c(
      "bold",
      `proxyscope fleet report — ${s.nodes} node(s), ${s.answered} answered${s.unanswered ? `, ${s.unanswered} without a report` : ""}`,
    ) + (r.partial ? `  ${c("bad", "PARTIAL: counts are a lower bound")}` : ""),
  );
  const cl = r.cluster;
  out.push(
    [
      `cluster ${cl.version ? safe(cl.version.gitVersion) : "version unknown"}`,
      `deprecation stage: ${cl.deprecationStage}`,
      `configured mode: ${cl.configuredMode ? safe(cl.configuredMode) : c("meh", safe(configuredModeLabel(cl)))}`,
      cl.kubeadm ? "kubeadm" : null,
      `source: ${r.source}`,
    ]
      .filter(Boolean)
      .join(" · "),
  );
  const counts = (m: Record<string, number>, tone: (k: string) => Tone) =>
    Object.entries(m)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${c(tone(k), k)} ${v}`)
      .join("  ") || "none";
  out.push(`phases:   ${counts(s.byPhase, (k) => (k === "no-report" ? "bad" : "bold"))}`);
  out.push(`verdicts: ${counts(s.byVerdict, (k) => VERDICT_TONE[k] ?? "dim")}`);
  if (s.parity && (s.parity.byState.compared ?? 0) > 0)
    out.push(
      `parity:   ${s.parity.same} same  ${c(s.parity.missingAfter > 0 ? "bad" : "dim", `${s.parity.missingAfter} lost`)}  ${s.parity.endpointsDiffer} endpoints differ` +
        (s.parity.nodesWithLost.length > 0
          ? `  (lost on ${s.parity.nodesWithLost.map(safe).join(", ")})`
          : ""),
    );
  const bv = s.parity?.byVerdict ?? {};
  if (Object.values(bv).some((v) => v > 0))
    out.push(
      `  vs API: ${c((bv["confirmed-loss"] ?? 0) > 0 ? "bad" : "dim", `${bv["confirmed-loss"] ?? 0} confirmed lost`)}  ${c((bv["real-loss"] ?? 0) > 0 ? "bad" : "dim", `${bv["real-loss"] ?? 0} endpoints lost`)}  ${bv.churn ?? 0} churn  ${bv.explained ?? 0} explained  ${c((bv["not-confirmed"] ?? 0) > 0 ? "meh" : "dim", `${bv["not-confirmed"] ?? 0} not confirmed`)}` +
        ((s.parity?.nodesWithConfirmedLoss ?? []).length > 0
          ? `  (on ${s.parity!.nodesWithConfirmedLoss!.map(safe).join(", ")})`
          : ""),
    );
  out.push("");

  if (r.clusterFindings.length > 0) {
    out.push(c("bold", "CLUSTER"));
    for (const f of r.clusterFindings) {
      out.push(
        `  ${c(f.severity, f.severity.toUpperCase().padEnd(8))} ${safe(f.title)}  ${c("dim", `[${f.id}]`)}`,
      );
      if (f.accepted) out.push(`           ${c("meh", `ACCEPTED: ${safe(f.accepted.reason)}`)}`);
      out.push(`           ${c("dim", `fix: ${safe(f.remedy)}`)}`);
      out.push(`           ${c("dim", `ref: ${findingPageUrl(f.id)}`)}`);
    }
    out.push("");
  }

  out.push(c("bold", "PLAN"));
  for (const p of r.plan) {
    // Step 4 names its candidates in the detail; its pools get a line of their own.
    const nodes = p.nodes.length && !p.pools ? ` — ${cut(p.nodes.map(safe).join(", "), 100)}` : "";
    out.push(`  ${p.step}. ${c(STATUS_TONE[p.status], p.status.padEnd(7))} ${safe(p.title)}`);
    if (p.detail) out.push(`             ${safe(p.detail)}${c("dim", nodes)}`);
    if (p.pools?.length)
      out.push(
        `             ${c("dim", `pools: ${cut(p.pools.map((x) => `${safe(x.pool)} (${x.readyNodes.length}/${x.nodes.length} fit)`).join("; "), 160)}`)}`,
      );
  }
  out.push("");

  out.push(c("bold", "NODES"));
  const rows = r.nodes.map((n) => [
    cut(safe(n.node), 40),
    cut(safe(n.kubeletVersion ?? "-"), 16),
    cut(safe(n.kernel ?? "-"), 24),
    cut(safe(n.osImage ?? "-"), 28),
    phaseOf(n),
    c(VERDICT_TONE[verdictOf(n)] ?? "dim", verdictOf(n)),
    cut(safe(worstFindings(n)), 60) || "-",
    // The last column: a long reason runs on (the terminal wraps it) rather than being cut mid-word.
    cut(safe(tableNote(nodeNote(n))), 200),
  ]);
  out.push(
    ...table(["NODE", "KUBELET", "KERNEL", "OS", "PHASE", "VERDICT", "FINDINGS", "NOTE"], rows).map(
      (l) => `  ${l}`,
    ),
  );
  // Parity: each Service parity flagged, as the API's current EndpointSlices judge it.
  const checked = r.nodes.filter((n) => (n.parity?.checks ?? []).length > 0);
  if (checked.length > 0) {
    out.push("", c("bold", "PARITY vs API (the flagged Services against their current EndpointSlices)"));
    for (const n of checked)
      for (const k of n.parity!.checks!.slice(0, 20))
        out.push(
          `  ${cut(safe(n.node), 40)}  ${c(k.severity, k.verdict.padEnd(14))} ${cut(safe(k.entry), 60)}  ${c("dim", cut(safe(k.reason), 200))}`,
        );
  }
  if (r.acceptances) out.push("", ...acceptLines(r.acceptances).map(safe));
  if (r.cluster.gaps.length > 0) {
    out.push("");
    out.push(c("meh", "NOT READ (the report is missing these cluster facts, not reporting them as absent):"));
    for (const g of r.cluster.gaps) out.push(`  ${safe(g.what)}: ${safe(g.reason)}`);
  }
  return out.join("\n");
}
