import t from "tap";
import { FleetReport } from "../../../collector/report/schema.js";
import { savedScope } from "../../../collector/report/scope.js";
import { renderHtml } from "../../../collector/render/html.js";
import { renderMarkdown } from "../../../collector/render/markdown.js";
import { renderTable } from "../../../collector/render/table.js";
import { goldenFleets } from "../../helpers/cluster-scenarios.js";
import { matchGolden } from "../../helpers/golden.js";

// What people read of the fleet report, byte for byte: the terminal table (with and without colour), the
// HTML page and the Markdown. The JSON and Markdown of every golden fleet are the wire contract
// (fleet-report-golden.test.ts); these hold the human formats still while their code is reshaped, so a
// refactor that changes one character of what a reader sees fails here.
const fleets = new Map(goldenFleets());
const SHOWN = ["review", "review-history", "no-api", "network-plugin-breaks", "config-unreadable"];

const names = (n: number, stem: string) => Array.from({ length: n }, (_, i) => `${stem}-${i + 1}`);

/**
 * Every optional part a renderer draws, in one report: a scope, a partial gather, accepted findings,
 * per-Service parity (lost, ARP-only, the API's verdicts, a stale snapshot), long lists cut with "+N",
 * a history that could not be read, and text that must be escaped in each format.
 */
function everything(): FleetReport {
  const r: FleetReport = structuredClone(fleets.get("review")!);
  const hostile = "a|b `c` <i>d</i> \u001b[31mred\u001b[0m";
  r.scope = savedScope(r, "saved-files", `reports/${hostile}`);
  r.partial = true;
  r.historyError = `Prometheus said 503 ${hostile}`;
  r.acceptances = {
    file: "accept.yaml",
    entries: 3,
    accepted: 2,
    expired: [`entry 2: expired 2026-01-01 (${hostile})`],
    unmatched: ["entry 3: matched no finding"],
  };
  r.clusterFindings[0]!.accepted = { reason: `moving next quarter ${hostile}`, entries: [0] };
  const withFinding = r.nodes.find((n) => n.findings.length > 0)!;
  withFinding.findings[0]!.accepted = { reason: "known", expires: "2027-01-01", entries: [1] };
  r.plan[0]!.nodes = names(45, "waiting");
  const [a, b, c] = r.nodes;
  a!.parity = {
    state: "compared",
    snapshotAgeSeconds: 900,
    counts: { same: 8, missingAfter: 12, endpointsDiffer: 1, newAfter: 0, arpOnly: 12 },
    lost: names(12, `shop/cart ${hostile} (10.96.0.20:80/TCP)`),
    differ: [
      {
        service: "web/api:https",
        protocol: "TCP",
        endpointsAfter: 1,
        after: ["10.0.0.9:443"],
        gone: ["10.0.0.8:443"],
        added: ["10.0.0.9:443"],
      },
    ],
    arpOnly: names(12, "shop/ext (192.168.1.50:80/TCP)"),
    checks: [
      {
        entry: `shop/cart ${hostile}`,
        agent: "missing-after",
        verdict: "confirmed-loss",
        severity: "error",
        reason: `still has endpoints ${hostile}`,
      },
      {
        entry: "web/api:https/TCP",
        agent: "endpoints-differ",
        verdict: "churn",
        severity: "info",
        reason: "the pods were replaced since the snapshot",
      },
      {
        entry: "web/old:http/TCP",
        agent: "endpoints-differ",
        verdict: "not-confirmed",
        severity: "warning",
        reason: "EndpointSlices not read",
      },
    ],
  };
  b!.parity = { state: "stale", snapshotAgeSeconds: 259_200, counts: null, lost: [], differ: [] };
  c!.parity = { state: "compared", snapshotAgeSeconds: null, counts: null, lost: [], differ: [] };
  r.summary.parity = {
    byState: { compared: 2, stale: 1 },
    nodesWithLost: [a!.node],
    missingAfter: 12,
    endpointsDiffer: 1,
    same: 8,
    byVerdict: { "confirmed-loss": 1, "real-loss": 0, churn: 1, explained: 0, "not-confirmed": 1 },
    nodesWithConfirmedLoss: [a!.node],
  };
  return FleetReport.parse(r);
}

const shown: [string, FleetReport][] = [
  ...SHOWN.map((n): [string, FleetReport] => [n, fleets.get(n)!]),
  ["everything", everything()],
];

for (const [name, report] of shown) {
  t.test(name, async (t) => {
    matchGolden(t, `fleet-render/${name}.table.txt`, renderTable(report, false));
    matchGolden(t, `fleet-render/${name}.table-colour.txt`, renderTable(report, true));
    matchGolden(t, `fleet-render/${name}.html`, renderHtml(report));
    // The golden fleets' Markdown is fleet-report-golden.test.ts's; only the composed report adds one.
    if (name === "everything") matchGolden(t, `fleet-render/${name}.md`, renderMarkdown(report));
  });
}

t.test("the composed report draws every optional part", async (t) => {
  const r = everything();
  const md = renderMarkdown(r);
  for (const part of [
    "Partial report",
    "Against the API",
    "reachable only by ARP",
    "Accepted findings",
    " +2",
  ])
    t.match(md, part, `Markdown: ${part}`);
  const table = renderTable(r, false);
  for (const part of ["PARITY vs API", "ACCEPTED:", "vs API:", "PARTIAL"])
    t.match(table, part, `table: ${part}`);
  t.match(renderHtml(r), 'id="scope"');
});
