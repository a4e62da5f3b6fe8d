import { findingPageUrl } from "../../common/finding-page.js";
import type { FleetReport } from "../report/schema.js";
import { terminalSafe as safe } from "../../common/escape.js";
import { acceptLines } from "../report/accept.js";
import { nodeNote, phaseOf, verdictOf, worstFindings } from "./labels.js";
import { cut, paint, STATUS_TONE, table, tableNote, VERDICT_TONE, type Paint } from "./table-layout.js";
import { summaryLines } from "./table-summary.js";

/** The report for a terminal; colour only when asked (the CLI asks on a TTY). */
export function renderTable(r: FleetReport, colour: boolean): string {
  const c = paint(colour);
  const out = [
    ...summaryLines(r, c),
    ...clusterLines(r, c),
    ...planLines(r, c),
    ...nodeLines(r, c),
    ...parityCheckLines(r, c),
    ...(r.acceptances ? ["", ...acceptLines(r.acceptances).map(safe)] : []),
  ];
  if (r.cluster.gaps.length > 0) {
    out.push("");
    out.push(c("meh", "NOT READ (the report is missing these cluster facts, not reporting them as absent):"));
    for (const g of r.cluster.gaps) out.push(`  ${safe(g.what)}: ${safe(g.reason)}`);
  }
  return out.join("\n");
}

function clusterLines(r: FleetReport, c: Paint): string[] {
  if (r.clusterFindings.length === 0) return [];
  return [
    c("bold", "CLUSTER"),
    ...r.clusterFindings.flatMap((f) => [
      `  ${c(f.severity, f.severity.toUpperCase().padEnd(8))} ${safe(f.title)}  ${c("dim", `[${f.id}]`)}`,
      ...(f.accepted ? [`           ${c("meh", `ACCEPTED: ${safe(f.accepted.reason)}`)}`] : []),
      `           ${c("dim", `fix: ${safe(f.remedy)}`)}`,
      `           ${c("dim", `ref: ${findingPageUrl(f.id)}`)}`,
    ]),
    "",
  ];
}

function planLines(r: FleetReport, c: Paint): string[] {
  const out = [c("bold", "PLAN")];
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
  return out;
}

function nodeLines(r: FleetReport, c: Paint): string[] {
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
  const head = ["NODE", "KUBELET", "KERNEL", "OS", "PHASE", "VERDICT", "FINDINGS", "NOTE"];
  return [c("bold", "NODES"), ...table(head, rows).map((l) => `  ${l}`)];
}

/** Parity: each Service parity flagged, as the API's current EndpointSlices judge it. */
function parityCheckLines(r: FleetReport, c: Paint): string[] {
  const checked = r.nodes.filter((n) => (n.parity?.checks ?? []).length > 0);
  if (checked.length === 0) return [];
  return [
    "",
    c("bold", "PARITY vs API (the flagged Services against their current EndpointSlices)"),
    ...checked.flatMap((n) =>
      n
        .parity!.checks!.slice(0, 20)
        .map(
          (k) =>
            `  ${cut(safe(n.node), 40)}  ${c(k.severity, k.verdict.padEnd(14))} ${cut(safe(k.entry), 60)}  ${c("dim", cut(safe(k.reason), 200))}`,
        ),
    ),
  ];
}
