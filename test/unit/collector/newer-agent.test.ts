// A rolling upgrade of the DaemonSet runs agents of two versions for hours, under one collector. What a
// newer agent adds in an open set (a finding id, a verify line, a fact's shape) must not drop its node:
// the collector keeps the node, reads the rest, and says what it did not know. docs/compatibility.md.
import t from "tap";
import { parseNodeReport, observationFromReport } from "../../../collector/gather/observe.js";
import { rollup } from "../../../collector/plan/rollup.js";
import { FleetReport } from "../../../collector/report/schema.js";
import { renderHtml } from "../../../collector/render/html.js";
import { renderMarkdown } from "../../../collector/render/markdown.js";
import { renderTable } from "../../../collector/render/table.js";
import { readVerifyAnswer } from "../../../common/verify-result.js";
import { renderVerify } from "../../../common/verify-render.js";
import { apiNode, input } from "../../helpers/fleet.js";
import { movedWithBlackHole, reportOf } from "../../helpers/reports.js";

const NEWER = "unknown to this collector (agent newer)";

/** What an agent one release ahead sends: a finding id, a parity state and a view field this collector has never seen. */
function newerReport(): string {
  const r = JSON.parse(JSON.stringify(reportOf(movedWithBlackHole()))) as Record<string, unknown>;
  (r.findings as unknown[]).push({
    id: "some-future-finding",
    severity: "warning",
    stage: "after",
    blocksMigration: false,
    title: "a check this collector predates",
    evidence: { n: 1 },
    remedy: "read its page",
    reference: "https://github.com/proxyscope/proxyscope/blob/main/docs/findings/some-future-finding.md",
  });
  (r.facts as Record<string, unknown>).parity = { state: "some-future-state", path: "/x", extra: 1 };
  return JSON.stringify(r);
}

t.test("a newer agent's report: the node is kept, read, and what was unknown is named", async (t) => {
  const parsed = parseNodeReport(newerReport());
  t.equal(parsed.ok, true, parsed.ok ? "parsed" : parsed.reason);
  if (!parsed.ok) return;
  t.equal(parsed.report.facts.parity, null, "a fact of unknown shape reads as not read, never as a value");
  t.equal(parsed.report.facts.proxyMode?.mode, "nftables", "the other facts are read");
  const obs = observationFromReport(parsed.report, "http://n1:9977", "n1", parsed.unknown);
  t.equal(obs.outcome, "ok");
  t.same(obs.unknownToCollector, ["facts.parity", "finding some-future-finding"]);
  t.equal(obs.parity, null, "parity unknown, never 'nothing lost'");

  const r = FleetReport.parse(rollup(input([obs], [apiNode("n1")])));
  const n = r.nodes.find((x) => x.node === "n1")!;
  t.equal(n.outcome, "ok", "never dropped");
  t.ok(
    n.findings.some((f) => f.id === "some-future-finding"),
    "the unknown finding is carried, with its severity",
  );
  t.equal(r.summary.answered, 1);
  t.match(renderTable(r, false), NEWER);
  t.match(renderMarkdown(r), NEWER);
  const page = renderHtml(r);
  t.match(page, /<span class="chip c-meh">unknown to this collector \(agent newer\)<\/span>/);
  t.match(page, /some-future-finding/);
});

t.test("a known key from a newer agent with the wrong version is still refused by version", async (t) => {
  const r = JSON.parse(newerReport()) as Record<string, unknown>;
  r.schemaVersion = "2";
  t.match(parseNodeReport(JSON.stringify(r)), { ok: false, outcome: "schema-mismatch" });
});

t.test("a report broken outside the open sets is still refused (not a NodeReport)", async (t) => {
  const r = JSON.parse(newerReport()) as Record<string, unknown>;
  r.phase = "some-future-phase";
  t.match(parseNodeReport(JSON.stringify(r)), { ok: false, outcome: "garbage", reason: /phase/ });
  const s = JSON.parse(newerReport()) as Record<string, unknown>;
  (s.findings as { severity: string }[])[0]!.severity = "fatal";
  t.match(parseNodeReport(JSON.stringify(s)), { ok: false, outcome: "garbage", reason: /severity/ });
});

t.test("a newer agent's /verify answer: an unknown line is shown as such, the answer kept", async (t) => {
  const body = JSON.stringify({
    schemaVersion: "1",
    node: "n1",
    checkedAt: "2026-12-01T12:00:00.000Z",
    passed: false,
    checks: [
      { id: "proxy-mode", name: "proxy mode (/proxyMode)", status: "ok", detail: null },
      { id: "some-future-line", name: "a line this collector predates", status: "fail", detail: "x" },
    ],
  });
  const v = readVerifyAnswer(body);
  t.equal(v.ok, true, v.ok ? "read" : v.error);
  if (!v.ok) return;
  t.same(v.unknownChecks, ["some-future-line"]);
  const text = renderVerify(v.result, v.unknownChecks);
  t.match(text, /a line this collector predates\s+FAIL \(x\) \[unknown to this collector \(agent newer\)\]/);
  t.match(text, /verify n1: FAIL/);
  t.match(readVerifyAnswer("{}"), { ok: false });
});

t.test("another release's scan-cache sources: the node is kept, the sources dropped and named", async (t) => {
  // The agent before the nf_tables generation gate named its sources nft-chains and nft-service-ips;
  // a later one may name others. The collector reads nothing in `sources`: never a reason to drop a node.
  const r = JSON.parse(JSON.stringify(reportOf(movedWithBlackHole()))) as Record<string, unknown>;
  r.sources = [
    { source: "nft-chains", readAt: "2026-12-01T10:00:00.000Z", ageSeconds: 30, reused: true, why: "x" },
  ];
  const parsed = parseNodeReport(JSON.stringify(r));
  t.equal(parsed.ok, true, parsed.ok ? "parsed" : parsed.reason);
  if (!parsed.ok) return;
  t.equal(parsed.report.sources, undefined, "sources of an unknown shape are dropped");
  t.same(parsed.unknown, ["sources"], "and named");
  t.equal(parsed.report.facts.proxyMode?.mode, "nftables", "the rest is read");
  r.sources = [
    { source: "nftables", readAt: "2026-12-01T10:00:00.000Z", ageSeconds: 30, reused: true, why: "x" },
  ];
  const current = parseNodeReport(JSON.stringify(r));
  t.ok(
    current.ok && current.report.sources?.[0]?.source === "nftables",
    "today's names are read as they are",
  );
  r.findings = "not a list";
  t.match(
    parseNodeReport(JSON.stringify(r)),
    { ok: false, outcome: "garbage" },
    "a broken contract part still is garbage",
  );
});
