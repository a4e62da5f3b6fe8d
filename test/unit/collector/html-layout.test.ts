// The HTML report's first screen answers "what is blocked and what next" (the plan, the cluster's
// findings) before the long per-node tables; a parity section with nothing compared folds away.
import t from "tap";
import { renderHtml } from "../../../collector/render/html.js";
import { goldenFleets } from "../../helpers/cluster-scenarios.js";

const fleets = new Map(goldenFleets());

t.test("plan and cluster findings come before the node tables", async (t) => {
  const out = renderHtml(fleets.get("no-api")!);
  const at = (id: string) => out.indexOf(`id="${id}"`);
  t.ok(at("plan") > 0 && at("cluster-findings") > 0 && at("nodes") > 0, "all three are there");
  t.ok(at("plan") < at("nodes"), "the plan above the nodes");
  t.ok(at("cluster-findings") < at("nodes"), "the cluster findings above the nodes");
  t.ok(at("cluster-findings") < at("parity") || at("parity") < 0, "and above parity");
});

t.test("a parity section with no node compared folds its table away", async (t) => {
  const base = fleets.get("no-api")!;
  const r = { ...base, nodes: [{ ...base.nodes[0]!, phase: "nftables" as const, parity: null }] };
  const out = renderHtml(r);
  const section = /<section[^>]*id="parity"[^]*?<\/section>/.exec(out)?.[0] ?? "";
  t.match(section, /Switched, parity not shown/, "what is unproven stays in view");
  t.match(section, /<details><summary>[^<]*no node compared[^<]*<\/summary>[^]*<table>/, "the table folded");
});
