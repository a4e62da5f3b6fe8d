import { createHash } from "node:crypto";
import type { FleetReport } from "../report/schema.js";
import { html as h, jsonForScript } from "../../common/escape.js";
import { renderCsv } from "./csv.js";
import { CSS, SCRIPT } from "./html-assets.js";
import { SCOPE_LABEL, scopeLines } from "../report/scope.js";
import { acceptLines } from "../report/accept.js";
import { paritySection } from "./html-parity.js";
import { burnDown, headline, tiles } from "./html-headline.js";
import { acceptedChip, page, poolTables } from "./html-nodes.js";
import { PHASE_TONE, SEV_TONE, STATUS_TONE, VERDICT_TONE } from "./html-tones.js";
import { configSourceLabel, configuredModeLabel, clusterUnread } from "./labels.js";

const sha256 = (s: string) => `'sha256-${createHash("sha256").update(s, "utf8").digest("base64")}'`;

/**
 * One self-contained page for the migration review: inline CSS and script allowed by hash in a strict
 * CSP, nothing fetched. Every value from a node or the API is escaped; the script's data is JSON with
 * `<` escaped, and the CSV it downloads is the same text `-o csv` prints.
 */
export function renderHtml(r: FleetReport): string {
  const body = pageBody(r);
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

function pageBody(r: FleetReport): string {
  const s = r.summary;
  const findings = clusterFindingItems(r);
  return `<header><h1>proxyscope: the ipvs → nftables migration${r.scope ? ` — ${h(SCOPE_LABEL[r.scope.kind])}` : ""}</h1>
<span class="meta">${s.nodes} nodes · ${s.answered} answered${s.unanswered ? ` · <b class="c-bad">${s.unanswered} without a report</b>` : ""} · source ${h(r.source)} · ${h(r.generatedAt)}</span>
<span class="actions"><button type="button" id="csv">CSV</button><button type="button" id="print">Print</button></span></header>
${r.scope ? `<div class="partial" id="scope">${scopeLines(r.scope).map(h).join("<br>")}</div>` : ""}
${r.partial ? `<div class="partial" id="partial">Partial report: ${s.unanswered} node(s) gave no usable report. Counts below are a lower bound; those nodes are listed with the reason.</div>` : ""}
<main>
${headline(r)}
${burnDown(r)}
<section class="span6" id="by-phase"><h2>Nodes by phase</h2>${tiles(s.byPhase, PHASE_TONE, s.nodes)}</section>
<section class="span6" id="by-verdict"><h2>Nodes by verdict</h2>${tiles(s.byVerdict, VERDICT_TONE, s.nodes)}</section>
<section class="span8" id="plan"><h2>The plan</h2><ol class="plan">${planItems(r)}</ol></section>
<section class="span4" id="cluster"><h2>Cluster</h2><dl>${clusterFacts(r)}</dl></section>
${acceptedSection(r)}
${findings ? `<section class="span12" id="cluster-findings"><h2>Cluster findings</h2><ul class="findings">${findings}</ul></section>` : ""}
${paritySection(r)}
${nodeFilters(r)}
${poolTables(r)}
</main>`;
}

function planItems(r: FleetReport): string {
  return r.plan
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
}

function clusterFindingItems(r: FleetReport): string {
  return r.clusterFindings
    .map(
      (f) =>
        `<li><span class="chip c-${SEV_TONE[f.severity]}">${h(f.severity)}</span> ${h(f.title)} <code>${h(f.id)}</code>${acceptedChip(f)}<div class="fix">${h(f.remedy)}</div><div class="fix">${page(f.id)}</div></li>`,
    )
    .join("\n");
}

function clusterFacts(r: FleetReport): string {
  const cl = r.cluster;
  // Unread Services are not zero Services.
  const unread = clusterUnread(cl);
  return [
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
}

function acceptedSection(r: FleetReport): string {
  if (!r.acceptances) return "";
  const items = acceptLines(r.acceptances)
    .map((l) => `<li>${h(l.trim())}</li>`)
    .join("");
  return `<section class="span12" id="accepted"><h2>Accepted findings</h2><ul class="findings">${items}</ul></section>`;
}

function nodeFilters(r: FleetReport): string {
  const options = (counts: Record<string, number>) =>
    Object.entries(counts)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `<option value="${h(k)}">${h(k)} (${v})</option>`)
      .join("");
  return `<section class="span12" id="nodes"><h2>Nodes by pool</h2>
<div class="filters"><select id="f-phase" aria-label="phase"><option value="">every phase</option>${options(r.summary.byPhase)}</select>
<select id="f-verdict" aria-label="verdict"><option value="">every verdict</option>${options(r.summary.byVerdict)}</select>
<input id="f-text" type="search" placeholder="filter: node, kernel, OS, label, finding" aria-label="text filter"><span class="count" id="shown"></span></div>
<div class="meta">Click a node to see its findings, their evidence and fix; click a column to sort.</div></section>`;
}
