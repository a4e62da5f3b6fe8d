import type { FleetReport } from "../report/schema.js";
import { md } from "../../common/escape.js";
import { scopeLines } from "../report/scope.js";
import { acceptLines } from "../report/accept.js";
import { configuredModeLabel, nodeNote, phaseOf, verdictOf, worstFindings } from "./labels.js";
import { firstOf, page, row, sev } from "./markdown-cells.js";
import { parityLines } from "./markdown-parity.js";

/** For a ticket or a wiki page: every value from a node or the API is escaped (|, backticks, HTML). */
export function renderMarkdown(r: FleetReport): string {
  const out = [
    ...summaryLines(r),
    ...planLines(r),
    ...clusterFindingLines(r),
    ...nodeLines(r),
    ...parityLines(r),
    ...nodeFindingLines(r),
    ...(r.acceptances
      ? ["", "## Accepted findings", "", ...acceptLines(r.acceptances).map((l) => `- ${md(l.trim())}`)]
      : []),
  ];
  return `${out.join("\n")}\n`;
}

/** The title, the scope before anything that could be read as the fleet's state, and the counts. */
function summaryLines(r: FleetReport): string[] {
  const s = r.summary;
  const counts = (m: Record<string, number>) =>
    Object.entries(m)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => row([k, v]));
  return [
    `# proxyscope fleet report`,
    "",
    ...(r.scope ? [...scopeLines(r.scope).map((l) => `> **${md(l)}**`), ""] : []),
    `${s.nodes} node(s), ${s.answered} answered${s.unanswered ? `, **${s.unanswered} without a report**` : ""}. ` +
      `Cluster ${md(r.cluster.version?.gitVersion ?? "version unknown")}, deprecation stage **${r.cluster.deprecationStage}**, ` +
      `configured mode **${md(configuredModeLabel(r.cluster))}**. Generated ${r.generatedAt} from ${r.source}.`,
    ...(r.partial
      ? ["", "> **Partial report**: some nodes gave no usable report; counts are a lower bound."]
      : []),
    "",
    "| phase | nodes |",
    "|---|---|",
    ...counts(s.byPhase),
    "",
    "| verdict | nodes |",
    "|---|---|",
    ...counts(s.byVerdict),
  ];
}

function planLines(r: FleetReport): string[] {
  return [
    "",
    "## Plan",
    "",
    "| step | status | what | detail | nodes |",
    "|---|---|---|---|---|",
    ...r.plan.map((p) => row([p.step, p.status, md(p.title), md(p.detail), md(firstOf(p.nodes, 20))])),
  ];
}

function clusterFindingLines(r: FleetReport): string[] {
  if (r.clusterFindings.length === 0) return [];
  return [
    "",
    "## Cluster findings",
    "",
    "| severity | finding | fix | id |",
    "|---|---|---|---|",
    ...r.clusterFindings.map((f) => row([sev(f), md(f.title), md(f.remedy), page(f.id)])),
  ];
}

function nodeLines(r: FleetReport): string[] {
  return [
    "",
    "## Nodes",
    "",
    "| node | kubelet | kernel | OS | phase | verdict | findings | note |",
    "|---|---|---|---|---|---|---|---|",
    ...r.nodes.map((n) =>
      row([
        md(n.node),
        md(n.kubeletVersion ?? "-"),
        md(n.kernel ?? "-"),
        md(n.osImage ?? "-"),
        phaseOf(n),
        verdictOf(n),
        md(worstFindings(n, 5) || "-"),
        md(nodeNote(n)),
      ]),
    ),
  ];
}

function nodeFindingLines(r: FleetReport): string[] {
  const withFindings = r.nodes.filter((n) => n.findings.length > 0);
  if (withFindings.length === 0) return [];
  return [
    "",
    "## Node findings",
    "",
    "| node | severity | finding | fix | id |",
    "|---|---|---|---|---|",
    ...withFindings.flatMap((n) =>
      n.findings.map((f) => row([md(n.node), sev(f), md(f.title ?? f.id), md(f.remedy ?? "-"), page(f.id)])),
    ),
  ];
}
