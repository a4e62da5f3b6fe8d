import { findingPageUrl, isFindingId } from "../../common/finding-page.js";
import type { FleetReport } from "../report/schema.js";
import { md } from "../../common/escape.js";
import { scopeLines } from "../report/scope.js";
import { acceptLines } from "../report/accept.js";
import { configuredModeLabel, nodeNote, phaseOf, verdictOf, worstFindings } from "./labels.js";

// A well-formed id links to its page, the address built from the id alone; any other text stays text.
const page = (id: string) => (isFindingId(id) ? `[${id}](${findingPageUrl(id)})` : md(id));

// An accepted finding keeps its row and its severity, marked with the reason it was accepted.
const sev = (f: { severity: string; accepted?: { reason: string } }) =>
  f.accepted ? `${f.severity} (accepted: ${md(f.accepted.reason)})` : f.severity;

const row = (cells: (string | number)[]) => `| ${cells.map(String).join(" | ")} |`;

/** For a ticket or a wiki page: every value from a node or the API is escaped (|, backticks, HTML). */
export function renderMarkdown(r: FleetReport): string {
  const s = r.summary;
  const out: string[] = [];
  out.push(`# proxyscope fleet report`);
  out.push("");
  if (r.scope) out.push(...scopeLines(r.scope).map((l) => `> **${md(l)}**`), "");
  out.push(
    `${s.nodes} node(s), ${s.answered} answered${s.unanswered ? `, **${s.unanswered} without a report**` : ""}. ` +
      `Cluster ${md(r.cluster.version?.gitVersion ?? "version unknown")}, deprecation stage **${r.cluster.deprecationStage}**, ` +
      `configured mode **${md(configuredModeLabel(r.cluster))}**. Generated ${r.generatedAt} from ${r.source}.`,
  );
  if (r.partial)
    out.push("", "> **Partial report**: some nodes gave no usable report; counts are a lower bound.");
  out.push("", "| phase | nodes |", "|---|---|");
  for (const [k, v] of Object.entries(s.byPhase)) if (v > 0) out.push(row([k, v]));
  out.push("", "| verdict | nodes |", "|---|---|");
  for (const [k, v] of Object.entries(s.byVerdict)) if (v > 0) out.push(row([k, v]));

  out.push("", "## Plan", "", "| step | status | what | detail | nodes |", "|---|---|---|---|---|");
  for (const p of r.plan)
    out.push(
      row([
        p.step,
        p.status,
        md(p.title),
        md(p.detail),
        md(p.nodes.slice(0, 20).join(", ") + (p.nodes.length > 20 ? ` +${p.nodes.length - 20}` : "")),
      ]),
    );

  if (r.clusterFindings.length > 0) {
    out.push("", "## Cluster findings", "", "| severity | finding | fix | id |", "|---|---|---|---|");
    for (const f of r.clusterFindings) out.push(row([sev(f), md(f.title), md(f.remedy), page(f.id)]));
  }

  out.push(
    "",
    "## Nodes",
    "",
    "| node | kubelet | kernel | OS | phase | verdict | findings | note |",
    "|---|---|---|---|---|---|---|---|",
  );
  for (const n of r.nodes)
    out.push(
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
    );
  // Parity: per-Service parity on the nodes that carry it.
  const withParity = r.nodes.filter((n) => n.parity != null && n.parity.state !== "off");
  if (withParity.length > 0) {
    const fp = s.parity;
    out.push(
      "",
      "## Service parity after the switch",
      "",
      fp
        ? `Fleet: ${fp.same} same, **${fp.missingAfter} lost**, ${fp.endpointsDiffer} with other endpoints` +
            (fp.nodesWithLost.length > 0 ? `; lost on ${md(fp.nodesWithLost.join(", "))}` : "")
        : "",
      "",
      "| node | parity | snapshot age | same | lost | endpoints differ | lost addresses |",
      "|---|---|---|---|---|---|---|",
    );
    for (const n of withParity) {
      const p = n.parity!;
      out.push(
        row([
          md(n.node),
          md(p.state),
          p.snapshotAgeSeconds === null ? "-" : `${Math.round(p.snapshotAgeSeconds / 60)} min`,
          p.counts?.same ?? "-",
          p.counts?.missingAfter ?? "-",
          p.counts?.endpointsDiffer ?? "-",
          md(p.lost.slice(0, 10).join(", ") + (p.lost.length > 10 ? ` +${p.lost.length - 10}` : "") || "-"),
        ]),
      );
    }
    // Served by nftables mode, but off the node only ever reached through kube-ipvs0's ARP answer.
    const byArp = withParity.filter((n) => (n.parity!.arpOnly ?? []).length > 0);
    if (byArp.length > 0) {
      out.push(
        "",
        "| node | reachable only by ARP from kube-ipvs0 before the switch (no one answers ARP now) |",
        "|---|---|",
      );
      for (const n of byArp) {
        const a = n.parity!.arpOnly!;
        out.push(
          row([md(n.node), md(a.slice(0, 10).join(", ") + (a.length > 10 ? ` +${a.length - 10}` : ""))]),
        );
      }
    }
    // Each flagged entry held against the Service's current EndpointSlices.
    const checked = withParity.filter((n) => (n.parity!.checks ?? []).length > 0);
    if (checked.length > 0) {
      const bv = fp?.byVerdict ?? {};
      out.push(
        "",
        "### Against the API's current EndpointSlices",
        "",
        `Fleet: **${bv["confirmed-loss"] ?? 0} confirmed lost**, **${bv["real-loss"] ?? 0} with endpoints lost**, ${bv.churn ?? 0} churn, ${bv.explained ?? 0} explained, ${bv["not-confirmed"] ?? 0} not confirmed` +
          ((fp?.nodesWithConfirmedLoss ?? []).length > 0
            ? `; confirmed on ${md(fp!.nodesWithConfirmedLoss!.join(", "))}`
            : ""),
        "",
        "| node | agent said | API says | severity | Service | why |",
        "|---|---|---|---|---|---|",
      );
      for (const n of checked)
        for (const k of n.parity!.checks!)
          out.push(row([md(n.node), k.agent, k.verdict, k.severity, md(k.entry), md(k.reason)]));
    }
  }
  const withFindings = r.nodes.filter((n) => n.findings.length > 0);
  if (withFindings.length > 0) {
    out.push("", "## Node findings", "", "| node | severity | finding | fix | id |", "|---|---|---|---|---|");
    for (const n of withFindings)
      for (const f of n.findings)
        out.push(row([md(n.node), sev(f), md(f.title ?? f.id), md(f.remedy ?? "-"), page(f.id)]));
  }
  if (r.acceptances)
    out.push("", "## Accepted findings", "", ...acceptLines(r.acceptances).map((l) => `- ${md(l.trim())}`));
  return `${out.join("\n")}\n`;
}
