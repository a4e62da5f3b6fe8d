import { md } from "../../common/escape.js";
import type { FleetNode, FleetReport } from "../report/schema.js";
import { firstOf, row } from "./markdown-cells.js";

type Summary = FleetReport["summary"]["parity"];

/** Per-Service parity on the nodes that carry it: counts, ARP-only addresses, and the API's verdicts. */
export function parityLines(r: FleetReport): string[] {
  const withParity = r.nodes.filter((n) => n.parity != null && n.parity.state !== "off");
  if (withParity.length === 0) return [];
  const fp = r.summary.parity;
  return [
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
    ...withParity.map(parityRow),
    ...arpOnlyLines(withParity),
    ...checkLines(withParity, fp),
  ];
}

function parityRow(n: FleetNode): string {
  const p = n.parity!;
  return row([
    md(n.node),
    md(p.state),
    p.snapshotAgeSeconds === null ? "-" : `${Math.round(p.snapshotAgeSeconds / 60)} min`,
    p.counts?.same ?? "-",
    p.counts?.missingAfter ?? "-",
    p.counts?.endpointsDiffer ?? "-",
    md(firstOf(p.lost, 10) || "-"),
  ]);
}

/** Served by nftables mode, but off the node only ever reached through kube-ipvs0's ARP answer. */
function arpOnlyLines(withParity: FleetNode[]): string[] {
  const byArp = withParity.filter((n) => (n.parity!.arpOnly ?? []).length > 0);
  if (byArp.length === 0) return [];
  return [
    "",
    "| node | reachable only by ARP from kube-ipvs0 before the switch (no one answers ARP now) |",
    "|---|---|",
    ...byArp.map((n) => row([md(n.node), md(firstOf(n.parity!.arpOnly!, 10))])),
  ];
}

/** Each flagged entry held against the Service's current EndpointSlices. */
function checkLines(withParity: FleetNode[], fp: Summary): string[] {
  const checked = withParity.filter((n) => (n.parity!.checks ?? []).length > 0);
  if (checked.length === 0) return [];
  const bv = fp?.byVerdict ?? {};
  const confirmedOn = fp?.nodesWithConfirmedLoss ?? [];
  return [
    "",
    "### Against the API's current EndpointSlices",
    "",
    `Fleet: **${bv["confirmed-loss"] ?? 0} confirmed lost**, **${bv["real-loss"] ?? 0} with endpoints lost**, ${bv.churn ?? 0} churn, ${bv.explained ?? 0} explained, ${bv["not-confirmed"] ?? 0} not confirmed` +
      (confirmedOn.length > 0 ? `; confirmed on ${md(confirmedOn.join(", "))}` : ""),
    "",
    "| node | agent said | API says | severity | Service | why |",
    "|---|---|---|---|---|---|",
    ...checked.flatMap((n) =>
      n.parity!.checks!.map((k) =>
        row([md(n.node), k.agent, k.verdict, k.severity, md(k.entry), md(k.reason)]),
      ),
    ),
  ];
}
