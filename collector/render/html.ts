import { createHash } from "node:crypto";
import type { FleetNode, FleetReport, PlanStatus } from "../report/schema.js";
import type { NodeFinding } from "../report/schema.js";
import { html as h, jsonForScript } from "../../common/escape.js";
import { findingPagePath, findingPageUrl, isFindingId } from "../../common/finding-page.js";
import { renderCsv, worstSeverity } from "./csv.js";
import { CSS, SCRIPT } from "./html-assets.js";
import { SCOPE_LABEL, scopeLines } from "../report/scope.js";
import { acceptLines } from "../report/accept.js";
import { paritySection } from "./html-parity.js";
import {
  configSourceLabel,
  configuredModeLabel,
  nodeNote,
  phaseOf,
  UNKNOWN_TO_COLLECTOR,
  verdictOf,
  worstFindings,
  clusterUnread,
} from "./labels.js";

type Tone = "good" | "meh" | "bad" | "info" | "none";
const VERDICT_TONE: Record<string, Tone> = {
  ready: "good",
  clean: "good",
  attention: "meh",
  leftovers: "meh",
  blocked: "bad",
  unhealthy: "bad",
  unknown: "none",
  "no-report": "bad",
};
const PHASE_TONE: Record<string, Tone> = {
  ipvs: "meh",
  iptables: "info",
  nftables: "good",
  none: "good",
  unknown: "none",
  "no-report": "bad",
};
const STATUS_TONE: Record<PlanStatus, Tone> = { done: "good", todo: "meh", blocked: "bad", "n/a": "none" };
const SEV_TONE: Record<string, Tone> = { critical: "bad", error: "bad", warning: "meh", info: "info" };
// Sort keys for the columns that are not alphabetical: worst first.
const VERDICT_RANK: Record<string, number> = {
  unhealthy: 0,
  blocked: 1,
  "no-report": 2,
  unknown: 3,
  leftovers: 4,
  attention: 5,
  ready: 6,
  clean: 7,
};
const SEV_RANK: Record<string, number> = { critical: 0, error: 1, warning: 2, info: 3, "": 4 };
/** Phases that are off ipvs: the migration's numerator. */
const OFF_IPVS = new Set(["nftables", "iptables", "none"]);

/** KEP-5495's dated stages, drawn on the timeline (the 1.46 gate removal is a footnote, not a stage). */
const STAGES = [
  { minor: 35, label: "1.35", what: "warning" },
  { minor: 37, label: "1.37", what: "KubeProxyIPVS gate" },
  { minor: 40, label: "1.40", what: "off by default" },
  { minor: 43, label: "1.43", what: "removed" },
];
const AXIS = { from: 34, to: 44 };
const at = (minor: number) =>
  ((100 * (Math.min(Math.max(minor, AXIS.from), AXIS.to) - AXIS.from)) / (AXIS.to - AXIS.from)).toFixed(1);

const sha256 = (s: string) => `'sha256-${createHash("sha256").update(s, "utf8").digest("base64")}'`;
const pct = (n: number, of: number) => (of === 0 ? 0 : Math.round((100 * n) / of));

function tiles(counts: Record<string, number>, tone: Record<string, Tone>, total: number): string {
  const entries = Object.entries(counts).filter(([, v]) => v > 0);
  const bar = entries
    .map(
      ([k, v]) =>
        `<i class="b-${tone[k] ?? "none"}" style="width:${((100 * v) / Math.max(1, total)).toFixed(2)}%" title="${h(k)}: ${v}"></i>`,
    )
    .join("");
  const t = entries
    .map(([k, v]) => `<div class="tile t-${tone[k] ?? "none"}"><b>${v}</b><span>${h(k)}</span></div>`)
    .join("");
  return `<div class="tiles">${t || '<span class="meta">no nodes</span>'}</div><div class="bar">${bar}</div>`;
}

function headline(r: FleetReport): string {
  const s = r.summary;
  const off = Object.entries(s.byPhase)
    .filter(([k]) => OFF_IPVS.has(k))
    .reduce((a, [, v]) => a + v, 0);
  const ipvs = s.byPhase["ipvs"] ?? 0;
  const blocked = s.byVerdict["blocked"] ?? 0;
  const unhealthy = s.byVerdict["unhealthy"] ?? 0;
  const v = r.cluster.version;
  const here =
    v && v.major === 1
      ? `<div class="here" style="left:${at(v.minor)}%"><span>you are here</span><b>${h(v.gitVersion)}</b></div>`
      : // No marker at all: a dot anywhere on the axis would read as a version.
        `<div class="when-unknown">Kubernetes version unknown: not placed on the timeline</div>`;
  const marks = STAGES.map(
    (st) =>
      `<div class="stage${v && v.major === 1 && v.minor >= st.minor ? " past" : ""}" style="left:${at(st.minor)}%"><b>${st.label}</b><span>${st.what}</span></div>`,
  ).join("");
  return `<section class="span12 headline" id="headline">
<div class="big"><b>${pct(off, s.nodes)}%</b><span>of ${s.nodes} nodes off ipvs</span><small>${off} off · ${ipvs} still on ipvs${s.unanswered ? ` · ${s.unanswered} without a report` : ""}</small></div>
<div class="big${blocked ? " bad" : ""}"><b>${blocked}</b><span>blocked</span><small>cannot switch until fixed</small></div>
<div class="big${unhealthy ? " bad" : ""}"><b>${unhealthy}</b><span>unhealthy</span><small>broken now, whatever the phase</small></div>
<div class="timeline" aria-label="deprecation timeline"><div class="axis"></div>${marks}${here}</div>
</section>`;
}

/** The burn-down from Prometheus history: one stacked column per sample, nodes by phase. */
function burnDown(r: FleetReport): string {
  const hist = r.history ?? [];
  if (r.historyError)
    return `<section class="span12" id="burn-down"><h2>Burn-down (from Prometheus)</h2><div class="meta">Prometheus history could not be read: ${h(r.historyError)}</div></section>`;
  if (hist.length === 0) return "";
  const phases = ["ipvs", "iptables", "nftables", "none", "unknown"];
  const max = Math.max(1, ...hist.map((p) => Object.values(p.byPhase).reduce((a, b) => a + b, 0)));
  const cols = hist
    .map((p) => {
      const parts = phases
        .filter((ph) => (p.byPhase[ph] ?? 0) > 0)
        .map(
          (ph) =>
            `<i class="b-${PHASE_TONE[ph] ?? "none"}" style="height:${((100 * (p.byPhase[ph] ?? 0)) / max).toFixed(1)}%" title="${h(p.at)} ${h(ph)}: ${p.byPhase[ph]}"></i>`,
        )
        .join("");
      return `<div class="col">${parts}</div>`;
    })
    .join("");
  const first = hist[0]!;
  const last = hist[hist.length - 1]!;
  const ipvsAt = (p: (typeof hist)[number]) => p.byPhase["ipvs"] ?? 0;
  return `<section class="span12" id="burn-down"><h2>Burn-down (from Prometheus)</h2>
<div class="burn">${cols}</div>
<div class="meta">${h(first.at)} → ${h(last.at)} · nodes in ipvs mode: ${ipvsAt(first)} → ${ipvsAt(last)} · <span class="c-meh">■</span> ipvs <span class="c-info">■</span> iptables <span class="c-good">■</span> nftables / none</div></section>`;
}

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

function page(id: string): string {
  if (!isFindingId(id)) return "";
  return `<a class="page" href="${h(findingPageUrl(id))}" rel="noreferrer">${h(findingPagePath(id))}</a>`;
}

const acceptedChip = (f: { accepted?: { reason: string } }) =>
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

function poolTables(r: FleetReport): string {
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
      const rows = ns
        .map((n) => {
          const search = [
            n.node,
            n.kernelVersion,
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
            [n.kernelVersion ?? "", h(n.kernelVersion ?? "-")],
            [n.osImage ?? "", h(n.osImage ?? "-")],
          ];
          return `<tr class="node" tabindex="0" aria-expanded="false" data-node="${h(n.node)}" data-phase="${h(phaseOf(n))}" data-verdict="${h(verdictOf(n))}" data-search="${h(search)}">${cells.map(([k, c]) => `<td data-s="${h(k)}">${c}</td>`).join("")}</tr>
<tr class="detail" hidden><td colspan="${COLUMNS.length}">${detail(n)}</td></tr>`;
        })
        .join("\n");
      return `<section class="span12 pool" id="pool-${i + 1}"><h2>${h(pool)}</h2>
<div class="meta">${ns.length} node(s) · ${off} off ipvs (${pct(off, ns.length)}%) · ${blocked} blocked</div>
<table class="sortable"><colgroup>${COL_CLASSES.map((c) => `<col class="${c}">`).join("")}</colgroup><thead><tr>${COLUMNS.map((c, j) => `<th><button type="button" data-col="${j}">${c}</button></th>`).join("")}</tr></thead>
<tbody>${rows}</tbody></table></section>`;
    })
    .join("\n");
}

/**
 * One self-contained page for the migration review: inline CSS and script allowed by hash in a strict
 * CSP, nothing fetched. Every value from a node or the API is escaped; the script's data is JSON with
 * `<` escaped, and the CSV it downloads is the same text `-o csv` prints.
 */
export function renderHtml(r: FleetReport): string {
  const s = r.summary;
  const cl = r.cluster;

  const plan = r.plan
    .map(
      (
        p,
      ) => `<li><span class="num">${p.step}</span><span><span class="chip c-${STATUS_TONE[p.status]}">${h(p.status)}</span></span>
<div><div>${h(p.title)}</div><div class="fix">${h(p.detail)}</div>${
        p.nodes.length
          ? `<div class="nodes">${h(p.nodes.slice(0, 40).join(", "))}${p.nodes.length > 40 ? ` +${p.nodes.length - 40}` : ""}</div>`
          : ""
      }${
        p.pools && p.pools.length
          ? `<div class="nodes">pools: ${p.pools.map((x) => `${h(x.pool)} (${x.readyNodes.length}/${x.nodes.length} fit)`).join("; ")}</div>`
          : ""
      }</div></li>`,
    )
    .join("\n");

  const findings = r.clusterFindings
    .map(
      (f) =>
        `<li><span class="chip c-${SEV_TONE[f.severity]}">${h(f.severity)}</span> ${h(f.title)} <code>${h(f.id)}</code>${acceptedChip(f)}<div class="fix">${h(f.remedy)}</div><div class="fix">${page(f.id)}</div></li>`,
    )
    .join("\n");

  const options = (counts: Record<string, number>) =>
    Object.entries(counts)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `<option value="${h(k)}">${h(k)} (${v})</option>`)
      .join("");

  // Unread Services are not zero Services.
  const unread = clusterUnread(cl);
  const facts = [
    ["Kubernetes", cl.version?.gitVersion ?? "unknown"],
    ["Deprecation stage", cl.deprecationStage],
    ["Configured mode", configuredModeLabel(cl)],
    ["kube-proxy image", cl.kubeProxyDaemonSet?.image ?? "-"],
    [
      "Config source",
      `${configSourceLabel(cl)}${cl.kubeadm ? " (kubeadm regenerates the ConfigMap on upgrade)" : ""}`,
    ],
    ["Services", unread ?? String(cl.services.total)],
    ["NodePorts", unread ?? String(cl.services.nodePorts.length)],
    ["sessionAffinity ClientIP", unread ?? String(cl.services.sessionAffinityClientIP.length)],
    ["externalTrafficPolicy Local", unread ?? String(cl.services.externalTrafficPolicyLocal.length)],
    ["internalTrafficPolicy Local", unread ?? String(cl.services.internalTrafficPolicyLocal.length)],
  ]
    .map(([k, v]) => `<dt>${h(k)}</dt><dd>${h(v)}</dd>`)
    .join("");

  const body = `<header><h1>proxyscope: the ipvs → nftables migration${r.scope ? ` — ${h(SCOPE_LABEL[r.scope.kind])}` : ""}</h1>
<span class="meta">${s.nodes} nodes · ${s.answered} answered${s.unanswered ? ` · <b class="c-bad">${s.unanswered} without a report</b>` : ""} · source ${h(r.source)} · ${h(r.generatedAt)}</span>
<span class="actions"><button type="button" id="csv">CSV</button><button type="button" id="print">Print</button></span></header>
${r.scope ? `<div class="partial" id="scope">${scopeLines(r.scope).map(h).join("<br>")}</div>` : ""}
${r.partial ? `<div class="partial" id="partial">Partial report: ${s.unanswered} node(s) gave no usable report. Counts below are a lower bound; those nodes are listed with the reason.</div>` : ""}
<main>
${headline(r)}
${burnDown(r)}
<section class="span6" id="by-phase"><h2>Nodes by phase</h2>${tiles(s.byPhase, PHASE_TONE, s.nodes)}</section>
<section class="span6" id="by-verdict"><h2>Nodes by verdict</h2>${tiles(s.byVerdict, VERDICT_TONE, s.nodes)}</section>
<section class="span8" id="plan"><h2>The plan</h2><ol class="plan">${plan}</ol></section>
<section class="span4" id="cluster"><h2>Cluster</h2><dl>${facts}</dl></section>
${
  r.acceptances
    ? `<section class="span12" id="accepted"><h2>Accepted findings</h2><ul class="findings">${acceptLines(
        r.acceptances,
      )
        .map((l) => `<li>${h(l.trim())}</li>`)
        .join("")}</ul></section>`
    : ""
}
${findings ? `<section class="span12" id="cluster-findings"><h2>Cluster findings</h2><ul class="findings">${findings}</ul></section>` : ""}
${paritySection(r)}
<section class="span12" id="nodes"><h2>Nodes by pool</h2>
<div class="filters"><select id="f-phase" aria-label="phase"><option value="">every phase</option>${options(s.byPhase)}</select>
<select id="f-verdict" aria-label="verdict"><option value="">every verdict</option>${options(s.byVerdict)}</select>
<input id="f-text" type="search" placeholder="filter: node, kernel, OS, label, finding" aria-label="text filter"><span class="count" id="shown"></span></div>
<div class="meta">Click a node to see its findings, their evidence and fix; click a column to sort.</div></section>
${poolTables(r)}
</main>`;

  // Inline style attributes (bar widths, timeline positions) are allowed by their exact hashes.
  const styleAttrs = [...new Set([...body.matchAll(/style="([^"]*)"/g)].map((m) => m[1]!))];
  const csp = [
    "default-src 'none'",
    `style-src ${[CSS, ...styleAttrs].map(sha256).join(" ")} 'unsafe-hashes'`,
    `script-src ${sha256(SCRIPT)}`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${h(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>proxyscope fleet report${r.scope ? ` (${h(SCOPE_LABEL[r.scope.kind])})` : ""}</title>
<style>${CSS}</style></head>
<body>
${body}
<script type="application/json" id="fleet-data">${jsonForScript({ nodes: r.nodes, csv: renderCsv(r) })}</script>
<script>${SCRIPT}</script>
</body></html>
`;
}
