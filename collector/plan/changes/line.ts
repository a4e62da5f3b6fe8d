import { findingPageUrl } from "../../../common/finding-page.js";
import type { ApiService } from "../../report/cluster-facts.js";
import type { FleetNode, NodeFinding } from "../../report/schema.js";
import { DOC, type Row } from "./rows.js";
import { ChangeLine } from "./schema.js";
import { onIpvs, type Seen } from "./seen.js";

const nameOf = (s: ApiService) => `${s.namespace}/${s.name}`;

export function line(
  s: ApiService,
  r: Row,
  where: "all" | { nodes: string[]; notKnown: string[]; detail: string[] },
  allDetail: readonly string[] = [],
) {
  const nodes = where === "all" ? [] : where.nodes;
  const notKnown = where === "all" ? [] : where.notKnown;
  return ChangeLine.parse({
    service: nameOf(s),
    row: r.row,
    change: r.change,
    why: `docs/ipvs-to-nftables.md#ipvs--nftables row ${r.row}: ${r.source}`,
    doc: DOC,
    finding: r.finding,
    findingPage: findingPageUrl(r.finding),
    where:
      where === "all"
        ? "all nodes"
        : nodes.length > 0
          ? nodes.join(", ")
          : `not known: ${notKnown.join("; ")}`,
    nodes,
    known: where === "all" || nodes.length > 0,
    notKnown,
    detail: where === "all" ? [...allDetail] : where.detail,
    todo: r.todo,
  });
}

/**
 * Per-node lines from one finding: `match` says, from the finding's evidence, whether it touches this
 * Service (with detail), does not, or cannot tell (a list cut short). Null when no node is concerned.
 */
export function fromFinding(
  s: ApiService,
  r: Row,
  seen: readonly Seen[],
  match: (f: NodeFinding) => { hit: boolean; detail?: string[]; unknown?: string },
): ChangeLine | null {
  const nodes: string[] = [];
  const notKnown: string[] = [];
  const detail: string[] = [];
  for (const x of seen) {
    if ("unknown" in x) {
      notKnown.push(`${x.node}: ${x.unknown}`);
      continue;
    }
    const m = match(x.finding);
    if (m.hit) {
      nodes.push(x.node);
      for (const d of m.detail ?? []) detail.push(`${x.node}: ${d}`);
    } else if (m.unknown) notKnown.push(`${x.node}: ${m.unknown}`);
  }
  if (nodes.length === 0 && notKnown.length === 0) return null;
  return line(s, r, { nodes, notKnown, detail });
}

/**
 * A row that holds for the Service wherever the switch is ahead: every node still on ipvs; `detail` is
 * what the nodes' findings add ("node: …").
 */
export function onIpvsNodes(
  s: ApiService,
  r: Row,
  nodes: readonly FleetNode[],
  detail: readonly string[] = [],
): ChangeLine | null {
  const on: string[] = [];
  const notKnown: string[] = [];
  for (const n of nodes) {
    const x = onIpvs(n);
    if (x === "ipvs") on.push(n.node);
    else if (x !== null) notKnown.push(`${n.node}: ${x.unknown}`);
  }
  if (on.length > 0 && on.length === nodes.length) return line(s, r, "all", detail);
  if (on.length === 0 && notKnown.length === 0) return null;
  return line(s, r, { nodes: on, notKnown, detail: [...detail] });
}
