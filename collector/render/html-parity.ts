import type { NodeParity } from "../parity/schema.js";
import type { FleetNode, FleetReport } from "../report/schema.js";
import { html as h } from "../../common/escape.js";

// Parity on the page: per-Service parity between the IPVS snapshot before the switch and kube-proxy's
// nftables maps after it, per node and fleet-wide. Everything here came from a node or the API, so
// every value is escaped. A node that switched but shows no parity is "not reported": unknown, never 0.

type Tone = "good" | "meh" | "bad" | "info" | "none";

/** The states the agent reports (agent/facts/parity.ts), in words; any other is shown as sent. */
const STATE: Record<string, { tone: Tone; label: string }> = {
  compared: { tone: "good", label: "compared" },
  stale: { tone: "bad", label: "stale snapshot: not compared" },
  corrupt: { tone: "bad", label: "snapshot unreadable: not compared" },
  "no-snapshot": { tone: "meh", label: "no snapshot taken before the switch" },
  recorded: { tone: "info", label: "snapshot kept (ipvs mode)" },
  "not-recorded": { tone: "meh", label: "no snapshot could be kept" },
  "not-applicable": { tone: "none", label: "not applicable" },
  off: { tone: "none", label: "not asked (no --parity-snapshot)" },
};
const NOT_REPORTED = { tone: "none" as Tone, label: "not reported" };

function age(s: number | null): string {
  if (s === null) return "-";
  if (s < 120) return `${Math.round(s)} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} d`;
}

function stateChip(p: NodeParity | null): string {
  const st = p === null ? NOT_REPORTED : (STATE[p.state] ?? { tone: "none" as Tone, label: p.state });
  const tone = p?.state === "compared" && (p.counts?.missingAfter ?? 0) > 0 ? "bad" : st.tone;
  return `<span class="chip c-${tone}">${h(st.label)}</span>`;
}

const count = (n: number | undefined) => (n === undefined ? "-" : String(n));

function lostCell(p: NodeParity | null): string {
  if (p === null || p.counts === null) return "-";
  if (p.counts.missingAfter === 0) return "-";
  // The Prometheus source carries the counts, not the addresses.
  if (p.lost.length === 0)
    return `<span class="meta">not carried by this source (read the node's /parity)</span>`;
  const shown = p.lost.slice(0, 10).map((l) => `<code>${h(l)}</code>`);
  return shown.join(", ") + (p.lost.length > 10 ? ` +${p.lost.length - 10}` : "");
}

function arpOnlyCell(p: NodeParity | null): string {
  const a = p?.arpOnly;
  // Absent: an older agent, or no comparison: not known, never "none".
  if (a === undefined) return "-";
  if (a.length === 0) return "none";
  const shown = a.slice(0, 10).map((l) => `<code>${h(l)}</code>`);
  return shown.join(", ") + (a.length > 10 ? ` +${a.length - 10}` : "");
}

/**
 * One column of the per-node table: its head and its cell. The EndpointSlice confirmation of each
 * "endpoints differ" (collector-side, from the Service's current EndpointSlices) is one more entry
 * here, after "endpoints differ", reading the node's parity the same way.
 */
const COLUMNS: { head: string; title: string; cell: (n: FleetNode, p: NodeParity | null) => string }[] = [
  { head: "Node", title: "", cell: (n) => h(n.node) },
  { head: "Parity", title: "", cell: (_n, p) => stateChip(p) },
  {
    head: "Snapshot age",
    title: "how old the IPVS snapshot was when the node compared it",
    cell: (_n, p) =>
      p?.state === "stale"
        ? `<b class="c-bad">${h(age(p.snapshotAgeSeconds))}</b>`
        : h(age(p?.snapshotAgeSeconds ?? null)),
  },
  {
    head: "In both",
    title: "served before and after, to the same endpoints",
    cell: (_n, p) => count(p?.counts?.same),
  },
  {
    head: "Missing after",
    title: "served by IPVS before, by no kube-proxy nftables map now",
    cell: (_n, p) =>
      (p?.counts?.missingAfter ?? 0) > 0
        ? `<b class="c-bad">${p!.counts!.missingAfter}</b>`
        : count(p?.counts?.missingAfter),
  },
  { head: "New after", title: "served now, not by IPVS before", cell: (_n, p) => count(p?.counts?.newAfter) },
  {
    head: "Endpoints differ",
    title: "served before and after, to other endpoints (churn, or a real loss)",
    cell: (_n, p) => count(p?.counts?.endpointsDiffer),
  },
  { head: "Lost", title: "the addresses, named from the API's Services", cell: (_n, p) => lostCell(p) },
  {
    head: "ARP only",
    title:
      "served now, but off the node IPVS was reached only through the ARP answer kube-ipvs0 gave: reachable only by ARP from kube-ipvs0, and no one answers ARP now",
    cell: (_n, p) => arpOnlyCell(p),
  },
];

/** The nodes the section lists: every node that carries parity, and every switched node that does not. */
function rows(r: FleetReport): FleetNode[] {
  return r.nodes.filter(
    (n) => n.outcome === "ok" && (n.phase === "nftables" || (n.parity != null && n.parity.state !== "off")),
  );
}

export function paritySection(r: FleetReport): string {
  const nodes = rows(r);
  if (nodes.length === 0) return "";
  const fp = r.summary.parity;
  const compared = nodes.filter((n) => n.parity?.state === "compared");
  // newAfter is not in the fleet tally; summed here from the same per-node counts.
  const newAfter = compared.reduce((a, n) => a + (n.parity?.counts?.newAfter ?? 0), 0);
  const stale = nodes.filter((n) => n.parity?.state === "stale").map((n) => n.node);
  const unproven = nodes
    .filter((n) => n.phase === "nftables" && n.parity?.state !== "compared")
    .map((n) => n.node);
  const tile = (v: number, label: string, tone: Tone) =>
    `<div class="tile t-${tone}"><b>${v}</b><span>${h(label)}</span></div>`;
  const tiles = fp
    ? `<div class="tiles">${tile(compared.length, "nodes compared", "info")}${tile(fp.same, "in both", "good")}${tile(
        fp.missingAfter,
        "missing after",
        fp.missingAfter > 0 ? "bad" : "good",
      )}${tile(newAfter, "new after", "info")}${tile(fp.endpointsDiffer, "endpoints differ", fp.endpointsDiffer > 0 ? "meh" : "good")}</div>`
    : "";
  const list = (xs: string[]) =>
    h(xs.slice(0, 40).join(", ") + (xs.length > 40 ? ` +${xs.length - 40}` : ""));
  const notes = [
    fp && fp.nodesWithLost.length > 0
      ? `<div class="fix c-bad" id="parity-lost">Services lost in the switch on ${list(fp.nodesWithLost)}: fix them before the next pool.</div>`
      : "",
    stale.length > 0
      ? `<div class="fix c-bad" id="parity-stale">Stale snapshot on ${list(stale)}: older than its limit, so not compared — parity there is unproven, not passed.</div>`
      : "",
    unproven.length > 0
      ? `<div class="fix" id="parity-unproven">Switched, parity not shown: ${list(unproven)} (no proof that nothing was lost).</div>`
      : "",
  ].join("");
  const head = COLUMNS.map((c) => `<th${c.title ? ` title="${h(c.title)}"` : ""}>${h(c.head)}</th>`).join("");
  const body = nodes
    .map((n) => {
      const p = n.parity ?? null;
      return `<tr data-node="${h(n.node)}">${COLUMNS.map((c) => `<td>${c.cell(n, p)}</td>`).join("")}</tr>`;
    })
    .join("\n");
  const rowsTable = `<table><thead><tr>${head}</tr></thead>
<tbody>${body}</tbody></table>`;
  // Nothing compared: the notes above say what is unproven; a table of empty rows folds away.
  const table =
    compared.length === 0
      ? `<details><summary>${nodes.length} node(s), no node compared</summary>${rowsTable}</details>`
      : rowsTable;
  return `<section class="span12" id="parity"><h2>Service parity after the switch</h2>
${tiles}${notes}
<div class="meta">Per node: the IPVS snapshot taken before the switch against kube-proxy's nftables maps after it. Endpoints change on their own between the two moments: "endpoints differ" is churn or a loss, "missing after" is a Service kube-proxy no longer programs.</div>
${table}</section>`;
}
