import { html as h } from "../../common/escape.js";
import { findingPagePath, findingPageUrl, isFindingId } from "../../common/finding-page.js";
import type { FleetNode, FleetReport, NodeFinding } from "../report/schema.js";
import { worstSeverity } from "./csv.js";
import { nodeNote, phaseOf, UNKNOWN_TO_COLLECTOR, verdictOf, worstFindings } from "./labels.js";
import { OFF_IPVS, pct, PHASE_TONE, SEV_RANK, SEV_TONE, VERDICT_RANK, VERDICT_TONE } from "./html-tones.js";

// The nodes on the page: one sortable table per pool, each row opening to the node's findings with
// their evidence and fix. Every value came from a node or the API, so every value is escaped.

function evidence(f: NodeFinding): string {
  if (!f.evidence)
    return `<div class="ev meta">evidence: not carried by this source (read the node's /report)</div>`;
  const rows = Object.entries(f.evidence)
    .map(([k, v]) => {
      const text = typeof v === "string" ? v : JSON.stringify(v);
      return `<div><span>${h(k)}</span> ${h(text.length > 600 ? `${text.slice(0, 600)}…` : text)}</div>`;
    })
    .join("");
  return rows ? `<div class="ev">${rows}</div>` : "";
}

export function page(id: string): string {
  if (!isFindingId(id)) return "";
  return `<a class="page" href="${h(findingPageUrl(id))}" rel="noreferrer">${h(findingPagePath(id))}</a>`;
}

export const acceptedChip = (f: { accepted?: { reason: string } }) =>
  f.accepted ? ` <span class="chip c-meh">accepted: ${h(f.accepted.reason)}</span>` : "";
const newerChip = `<span class="chip c-meh">${h(UNKNOWN_TO_COLLECTOR)}</span>`;

function detail(n: FleetNode): string {
  const newer = new Set(n.unknownToCollector ?? []);
  const head = `<div class="meta">${h(n.node)} · outcome ${h(n.outcome)}${n.endpoint ? ` · ${h(n.endpoint)}` : ""}${n.scannedAt ? ` · scanned ${h(n.scannedAt)}` : ""}</div>`;
  const note = nodeNote(n) ? `<div class="fix">${h(nodeNote(n))}</div>` : "";
  const fs = n.findings
    .map(
      (
        f,
      ) => `<li><span class="chip c-${SEV_TONE[f.severity] ?? "none"}">${h(f.severity)}</span> ${h(f.title ?? f.id)} <code>${h(f.id)}</code>${newer.has(`finding ${f.id}`) ? ` ${newerChip}` : ""}${acceptedChip(f)}
${evidence(f)}${f.remedy ? `<div class="fix"><b>fix:</b> ${h(f.remedy)}</div>` : ""}<div class="fix">${page(f.id)}</div></li>`,
    )
    .join("\n");
  return `${head}${note}${fs ? `<ul class="findings">${fs}</ul>` : '<div class="meta">no findings</div>'}`;
}

const COLUMNS = ["Node", "Phase", "Verdict", "Worst", "Findings", "Kubelet", "Kernel", "OS image"];
const COL_CLASSES = [
  "c-node",
  "c-phase",
  "c-verdict",
  "c-worst",
  "c-findings",
  "c-kubelet",
  "c-kernel",
  "c-os",
];

export function poolTables(r: FleetReport): string {
  const pools = new Map<string, FleetNode[]>();
  // Appended in place: copying the pool's list for each node is quadratic in the fleet's size.
  for (const n of r.nodes) {
    const pool = pools.get(n.pool);
    if (pool) pool.push(n);
    else pools.set(n.pool, [n]);
  }
  return [...pools.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([pool, ns], i) => {
      const off = ns.filter((n) => OFF_IPVS.has(phaseOf(n))).length;
      const blocked = ns.filter((n) => n.verdict === "blocked").length;
      const rows = ns.map(nodeRows).join("\n");
      return `<section class="span12 pool" id="pool-${i + 1}"><h2>${h(pool)}</h2>
<div class="meta">${ns.length} node(s) · ${off} off ipvs (${pct(off, ns.length)}%) · ${blocked} blocked</div>
<table class="sortable"><colgroup>${COL_CLASSES.map((c) => `<col class="${c}">`).join("")}</colgroup><thead><tr>${COLUMNS.map((c, j) => `<th><button type="button" data-col="${j}">${c}</button></th>`).join("")}</tr></thead>
<tbody>${rows}</tbody></table></section>`;
    })
    .join("\n");
}

/** A node's row (each cell with its sort key) and the hidden row of its findings under it. */
function nodeRows(n: FleetNode): string {
  const search = [
    n.node,
    n.kernel,
    n.osImage,
    n.kubeletVersion,
    n.pool,
    ...n.findings.map((f) => f.id),
    ...Object.entries(n.labels).map(([k, v]) => `${k}=${v}`),
    nodeNote(n),
  ]
    .join(" ")
    .toLowerCase();
  const worst = worstSeverity(n);
  const cells = [
    [
      n.node,
      `${h(n.node)}${n.listedByApi === false ? ' <span class="chip c-meh">not in API</span>' : ""}${n.unknownToCollector?.length ? ` ${newerChip}` : ""}`,
    ],
    [phaseOf(n), `<span class="chip c-${PHASE_TONE[phaseOf(n)] ?? "none"}">${h(phaseOf(n))}</span>`],
    [
      String(VERDICT_RANK[verdictOf(n)] ?? 9),
      `<span class="chip c-${VERDICT_TONE[verdictOf(n)] ?? "none"}">${h(verdictOf(n))}</span>`,
    ],
    [
      String(SEV_RANK[worst] ?? 4),
      worst ? `<span class="chip c-${SEV_TONE[worst] ?? "none"}">${h(worst)}</span>` : "-",
    ],
    [worstFindings(n, 9), `<code>${h(worstFindings(n, 3) || "-")}</code>`],
    [n.kubeletVersion ?? "", h(n.kubeletVersion ?? "-")],
    [n.kernel ?? "", h(n.kernel ?? "-")],
    [n.osImage ?? "", h(n.osImage ?? "-")],
  ];
  return `<tr class="node" tabindex="0" aria-expanded="false" data-node="${h(n.node)}" data-phase="${h(phaseOf(n))}" data-verdict="${h(verdictOf(n))}" data-search="${h(search)}">${cells.map(([k, c]) => `<td data-s="${h(k)}">${c}</td>`).join("")}</tr>
<tr class="detail" hidden><td colspan="${COLUMNS.length}">${detail(n)}</td></tr>`;
}
