/* eslint-disable no-control-regex -- the renderer tests look for raw ESC on purpose */
import t from "tap";
import { failedObservation } from "../../../collector/gather/observe.js";
import { rollup } from "../../../collector/plan/rollup.js";
import { FleetReport } from "../../../collector/report/schema.js";
import { renderTable } from "../../../collector/render/table.js";
import { renderMarkdown } from "../../../collector/render/markdown.js";
import { reasonsToFail } from "../../../collector/report/fail-on.js";
import { apiNode, input, ok } from "../../helpers/fleet.js";

t.test("no API node is ever dropped; strangers are listed; duplicates keep the usable answer", async (t) => {
  const nodes = ["a", "b", "c", "d"].map((n) => apiNode(n));
  const r = FleetReport.parse(
    rollup(
      input(
        [
          ok("a", "ipvs", "ready"),
          failedObservation("b", "http://b", "timeout", "no answer"),
          ok("b", "ipvs", "attention"),
          ok("stranger", "nftables", "clean"),
          failedObservation("c", "http://c", "garbage", "not JSON"),
        ],
        nodes,
      ),
    ),
  );
  t.same(
    r.nodes.map((n) => [n.node, n.outcome, n.listedByApi]),
    [
      ["a", "ok", true],
      ["b", "ok", true],
      ["c", "garbage", true],
      ["d", "no-agent", true],
      ["stranger", "ok", false],
    ],
  );
  t.equal(r.partial, true);
  t.same(r.summary.byVerdict, {
    ready: 1,
    blocked: 0,
    attention: 1,
    clean: 1,
    leftovers: 0,
    unhealthy: 0,
    unknown: 0,
    "no-report": 2,
  });
});

t.test("plan: canaries one per pool, fit nodes only; blocked when none is fit", async (t) => {
  const nodes = [
    apiNode("a1", undefined, { agentpool: "a" }),
    apiNode("a2", undefined, { agentpool: "a" }),
    apiNode("b1", "5.4.0-216-generic", { agentpool: "b" }),
  ];
  const kernel = { id: "kernel-too-old-for-nftables", severity: "error" as const, blocksMigration: true };
  const r = rollup(
    input(
      [ok("a1", "ipvs", "attention"), ok("a2", "ipvs", "ready"), ok("b1", "ipvs", "blocked", [kernel])],
      nodes,
    ),
  );
  const step4 = r.plan[3]!;
  t.equal(step4.status, "todo");
  t.same(step4.nodes, ["a2"], "the ready node of pool a first");
  t.same(
    step4.pools?.map((p) => [p.nodes.length, p.readyNodes]),
    [
      [2, ["a2", "a1"]],
      [1, []],
    ],
  );
  t.same(r.plan[1]!.nodes, ["b1"]);
  const none = rollup(input([ok("b1", "ipvs", "blocked", [kernel])], [nodes[2]!]));
  t.equal(none.plan[3]!.status, "blocked");
  t.same(reasonsToFail(r, "blocked"), ["b1: blocked"]);
  t.same(reasonsToFail(r, "critical"), []);
  t.ok(reasonsToFail(r, "error").includes("b1: kernel-too-old-for-nftables (error)"));
});

t.test("renderers escape control characters and markup from nodes", async (t) => {
  const evil = "evil\u001b]0;pwned\u0007\n| `x` <b>";
  const r = rollup(input([ok(evil, "ipvs", "ready")], [apiNode(evil)]));
  const table = renderTable(r, false);
  t.notMatch(table, /\u001b/, "no escape sequence from data without colour");
  t.match(table, /evil\\u001b\]0;pwned\\u0007\\u000a/);
  t.notMatch(renderTable(r, true), /\u001b\]0;pwned/, "colour adds SGR only");
  const md = renderMarkdown(r);
  t.notMatch(md, /\u001b/, "no raw control characters in Markdown either");
  t.notMatch(md, /<b>/);
  t.match(md, /\\\| \\`x\\` &lt;b&gt;/);
});
