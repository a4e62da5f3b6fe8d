import { html as h } from "../../common/escape.js";
import type { FleetReport } from "../report/schema.js";
import { OFF_IPVS, PHASE_TONE, pct, type Tone } from "./html-tones.js";

// The top of the page: how far the fleet is off ipvs, where the cluster stands on the deprecation's
// timeline, the burn-down from Prometheus history, and the count tiles.

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

export function tiles(counts: Record<string, number>, tone: Record<string, Tone>, total: number): string {
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

export function headline(r: FleetReport): string {
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
export function burnDown(r: FleetReport): string {
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
