// -o junit: one testcase per node and per cluster finding, failing exactly where --fail-on (and so the
// exit code) is reached, unread nodes skipped (never passed), and every value from a node or the API
// escaped into well-formed XML.
import t, { type Test } from "tap";
import { reasonsToFail } from "../../../collector/report/fail-on.js";
import { renderJunit, xml } from "../../../collector/render/junit.js";
import type { FleetReport } from "../../../collector/report/schema.js";
import { reviewFleet } from "../../helpers/review-fleet.js";

/** Well-formed enough to trust: every tag closed in order, attributes quoted, no raw < or stray &. */
function checkXml(t: Test, doc: string): void {
  const body = doc.replace(/^<\?xml [^?]*\?>\n/, "").replace(/<!--(?:(?!--)[\s\S])*-->/g, "");
  const stack: string[] = [];
  const tag = /<(\/?)([a-z-]+)((?:\s+[a-zA-Z]+="[^"<]*")*)\s*(\/?)>/gy;
  let i = 0;
  for (;;) {
    const next = body.indexOf("<", i);
    const text = body.slice(i, next === -1 ? undefined : next);
    t.notMatch(text, /&(?!(amp|lt|gt|quot|apos);)/, "no bare & in text");
    t.notMatch(text, />/, "no raw > in text");
    if (next === -1) break;
    tag.lastIndex = next;
    const m = tag.exec(body);
    if (!m) {
      t.fail(`not a tag at ${body.slice(next, next + 60)}`);
      return;
    }
    for (const v of m[3]!.matchAll(/="([^"]*)"/g))
      t.notMatch(v[1], /&(?!(amp|lt|gt|quot|apos);)/, "no bare & in an attribute");
    if (m[1]) t.equal(stack.pop(), m[2], `</${m[2]}> closes its tag`);
    else if (!m[4]) stack.push(m[2]!);
    i = tag.lastIndex;
  }
  t.same(stack, [], "every tag closed");
}

const fleet = reviewFleet();
const count = (s: string, re: RegExp) => (s.match(re) ?? []).length;

t.test("one testcase per node and per cluster finding; failures where --fail-on is reached", async (t) => {
  for (const failOn of ["error", "warning", "blocked", "unanswered", null] as const) {
    const out = renderJunit(fleet, failOn);
    checkXml(t, out);
    const gaps = fleet.cluster.gaps.length;
    t.equal(count(out, /<testcase /g), fleet.nodes.length + fleet.clusterFindings.length + gaps);
    const nodeFailures = fleet.nodes.filter((n) =>
      reasonsToFail({ ...fleet, nodes: [n], clusterFindings: [] } as FleetReport, failOn).some((r) =>
        r.startsWith(`${n.node}:`),
      ),
    ).length;
    const clusterFailures = reasonsToFail({ ...fleet, nodes: [] }, failOn).length;
    t.equal(count(out, /<failure /g), nodeFailures + clusterFailures, `--fail-on ${failOn}`);
    t.match(
      out,
      new RegExp(
        `<testsuites name="proxyscope fleet report" tests="\\d+" failures="${nodeFailures + clusterFailures}"`,
      ),
    );
    if (failOn === null) t.equal(count(out, /<failure /g), 0, "no --fail-on: nothing fails");
  }
  const unread = fleet.nodes.filter((n) => n.outcome !== "ok");
  t.ok(unread.length > 0, "the review fleet has a node without a report");
  const out = renderJunit(fleet, "error");
  for (const n of unread)
    t.match(
      out,
      new RegExp(`name="${n.node}" time="0">\\n {6}<skipped message="not read: `),
      "unread is skipped",
    );
});

t.test("what a node or the API supplies is escaped; XML-illegal characters replaced", async (t) => {
  const evil = `<x a="1">&amp;'\u0001\u001b]8;;\ud800`;
  const r: FleetReport = {
    ...fleet,
    scope: { kind: "cluster-only", heading: "cluster-only preflight: -- and --> too", notRead: [] },
    nodes: fleet.nodes.map((n, i) =>
      i === 0
        ? { ...n, node: evil, findings: [{ id: "x", severity: "error", title: `</failure>${evil}` }] }
        : n,
    ),
  };
  const out = renderJunit(r, "error");
  checkXml(t, out);
  t.match(out, /name="&lt;x a=&quot;1&quot;&gt;&amp;amp;&apos;\ufffd\ufffd\]8;;\ufffd"/);
  t.notOk(out.includes("\u0001") || out.includes("\u001b"), "no control character left");
  t.match(out, /<testsuites name="proxyscope fleet report \(cluster-only preflight\)"/);
  t.match(out, /<!-- cluster-only preflight: - - and - -&gt; too -->/);
  t.equal(xml("a\u0000b\u000bc\td\ne"), "a\ufffdb\ufffdc\td\ne", "tab and newline stay");
});
