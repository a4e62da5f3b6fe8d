import { createHash } from "node:crypto";
import type { FleetReport, PlanStatus } from "../report/schema.js";
import { html as h, jsonForScript } from "../../common/escape.js";
import { CSS, SCRIPT } from "./html-assets.js";
import {
  configSourceLabel,
  configuredModeLabel,
  nodeNote,
  phaseOf,
  verdictOf,
  worstFindings,
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
  none: "none",
  unknown: "none",
  "no-report": "bad",
};
const STATUS_TONE: Record<PlanStatus, Tone> = { done: "good", todo: "meh", blocked: "bad", "n/a": "none" };
const SEV_TONE = { critical: "bad", error: "bad", warning: "meh", info: "info" } as const;

const sha256 = (s: string) => `'sha256-${createHash("sha256").update(s, "utf8").digest("base64")}'`;

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

/**
 * One self-contained page: inline CSS and script allowed by hash in a strict CSP, nothing fetched.
 * Every value from a node or the API is escaped; the script's data is JSON with `<` escaped.
 */
export function renderHtml(r: FleetReport): string {
  const s = r.summary;
  const cl = r.cluster;
  const css = CSS;
  const csp = [
    "default-src 'none'",
    `style-src ${sha256(css)} 'unsafe-hashes'`,
    `script-src ${sha256(SCRIPT)}`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  // The bar widths are inline style attributes; allow exactly those hashes too.
  const phaseTiles = tiles(s.byPhase, PHASE_TONE, s.nodes);
  const verdictTiles = tiles(s.byVerdict, VERDICT_TONE, s.nodes);
  const styleAttrs = [
    ...new Set([...`${phaseTiles}${verdictTiles}`.matchAll(/style="([^"]*)"/g)].map((m) => m[1]!)),
  ];
  const cspWithAttrs = csp.replace(
    `style-src ${sha256(css)} 'unsafe-hashes'`,
    `style-src ${[css, ...styleAttrs].map(sha256).join(" ")} 'unsafe-hashes'`,
  );

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
        `<li><span class="chip c-${SEV_TONE[f.severity]}">${h(f.severity)}</span> ${h(f.title)} <code>${h(f.id)}</code><div class="fix">${h(f.remedy)}</div></li>`,
    )
    .join("\n");

  const options = (counts: Record<string, number>) =>
    Object.entries(counts)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `<option value="${h(k)}">${h(k)} (${v})</option>`)
      .join("");

  const rows = r.nodes
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
      return `<tr class="node" data-node="${h(n.node)}" data-phase="${h(phaseOf(n))}" data-verdict="${h(verdictOf(n))}" data-search="${h(search)}">
<td>${h(n.node)}${n.listedByApi === false ? ' <span class="chip c-meh">not in API</span>' : ""}</td><td>${h(n.kubeletVersion ?? "-")}</td><td>${h(n.kernelVersion ?? "-")}</td><td>${h(n.osImage ?? "-")}</td>
<td><span class="chip c-${PHASE_TONE[phaseOf(n)] ?? "none"}">${h(phaseOf(n))}</span></td><td><span class="chip c-${VERDICT_TONE[verdictOf(n)] ?? "none"}">${h(verdictOf(n))}</span></td>
<td><code>${h(worstFindings(n, 4) || "-")}</code></td><td>${h(n.pool)}</td><td class="note">${h(nodeNote(n))}</td></tr>`;
    })
    .join("\n");

  const facts = [
    ["Kubernetes", cl.version?.gitVersion ?? "unknown"],
    ["Deprecation stage", cl.deprecationStage],
    ["Configured mode", configuredModeLabel(cl)],
    ["kube-proxy image", cl.kubeProxyDaemonSet?.image ?? "-"],
    [
      "Config source",
      `${configSourceLabel(cl)}${cl.kubeadm ? " (kubeadm regenerates the ConfigMap on upgrade)" : ""}`,
    ],
    ["Services", String(cl.services.total)],
    ["NodePorts", String(cl.services.nodePorts.length)],
    ["sessionAffinity ClientIP", String(cl.services.sessionAffinityClientIP.length)],
    ["externalTrafficPolicy Local", String(cl.services.externalTrafficPolicyLocal.length)],
    ["internalTrafficPolicy Local", String(cl.services.internalTrafficPolicyLocal.length)],
  ]
    .map(([k, v]) => `<dt>${h(k)}</dt><dd>${h(v)}</dd>`)
    .join("");

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${h(cspWithAttrs)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>proxyscope fleet report</title>
<style>${css}</style></head>
<body>
<header><h1>proxyscope fleet report</h1>
<span class="meta">${s.nodes} nodes · ${s.answered} answered${s.unanswered ? ` · <b class="c-bad">${s.unanswered} without a report</b>` : ""} · ${h(r.source)} · ${h(r.generatedAt)}</span></header>
${r.partial ? `<div class="partial" id="partial">Partial report: ${s.unanswered} node(s) gave no usable report. Counts below are a lower bound; those nodes are listed with the reason.</div>` : ""}
<main>
<section class="span6" id="by-phase"><h2>Nodes by phase</h2>${phaseTiles}</section>
<section class="span6" id="by-verdict"><h2>Nodes by verdict</h2>${verdictTiles}</section>
<section class="span8" id="plan"><h2>The plan</h2><ol class="plan">${plan}</ol></section>
<section class="span4" id="cluster"><h2>Cluster</h2><dl>${facts}</dl></section>
${findings ? `<section class="span12" id="cluster-findings"><h2>Cluster findings</h2><ul class="findings">${findings}</ul></section>` : ""}
<section class="span12" id="nodes"><h2>Nodes</h2>
<div class="filters"><select id="f-phase" aria-label="phase"><option value="">every phase</option>${options(s.byPhase)}</select>
<select id="f-verdict" aria-label="verdict"><option value="">every verdict</option>${options(s.byVerdict)}</select>
<input id="f-text" type="search" placeholder="filter: node, kernel, OS, label, finding" aria-label="text filter"><span class="count" id="shown"></span></div>
<table><thead><tr><th>Node</th><th>Kubelet</th><th>Kernel</th><th>OS image</th><th>Phase</th><th>Verdict</th><th>Findings</th><th>Pool</th><th>Note</th></tr></thead>
<tbody>${rows}</tbody></table><div id="detail"></div></section>
</main>
<script type="application/json" id="fleet-data">${jsonForScript({ nodes: r.nodes })}</script>
<script>${SCRIPT}</script>
</body></html>
`;
}
