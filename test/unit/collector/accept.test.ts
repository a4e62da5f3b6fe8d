// --accept-file: accepted findings stay in the report, marked in every format, and stop counting for
// --fail-on's severities; expired and unmatched entries are reported; a bad file is named by entry.
import t from "tap";
import { reasonsToFail } from "../../../collector/report/fail-on.js";
import { applyAcceptances, parseAcceptFile, servicesNamed } from "../../../collector/report/accept.js";
import type { FleetReport } from "../../../collector/report/schema.js";
import { renderCsv } from "../../../collector/render/csv.js";
import { renderHtml } from "../../../collector/render/html.js";
import { renderJunit } from "../../../collector/render/junit.js";
import { renderMarkdown } from "../../../collector/render/markdown.js";
import { renderTable } from "../../../collector/render/table.js";
import { reviewFleet } from "../../helpers/review-fleet.js";

const fleet = reviewFleet();
const ids = (r: FleetReport) => r.nodes.flatMap((n) => n.findings.map((f) => `${n.node} ${f.id}`));

t.test("the file's errors are named by entry and field", async (t) => {
  for (const [text, msg] of [
    ["accept: [{finding: x}]", /--accept-file a\.yaml: accept\[0\]\.reason: .*(required|expected string)/],
    ["accept: [{finding: x, reason: '  '}]", /accept\[0\]\.reason: a reason is required/],
    ["accept: [{finding: x, reason: r, nod: n}]", /accept\[0\]: Unrecognized key.*"nod"/],
    ["accept: [{finding: x, reason: r, expires: soon}]", /accept\[0\]\.expires: must be a date/],
    ["accept: [{finding: x, reason: r, service: cart}]", /accept\[0\]\.service: must be NAMESPACE\/NAME/],
    ["accept: [{finding: 'Bad Id', reason: r}]", /accept\[0\]\.finding: must be a finding id/],
    ["entries: []", /Unrecognized key.*"entries"|accept: /],
    ["accept: [", /not YAML or JSON/],
    ["", /--accept-file a\.yaml: .*expected object/],
  ] as const)
    t.throws(() => parseAcceptFile(text, "a.yaml"), { message: msg }, text);
  const yaml = parseAcceptFile(
    "accept:\n  - finding: ipvs-mode-deprecated\n    reason: r\n    expires: 2027-01-31\n",
    "a",
  );
  const json = parseAcceptFile(
    JSON.stringify({ accept: [{ finding: "ipvs-mode-deprecated", reason: "r", expires: "2027-01-31" }] }),
    "a",
  );
  t.same(yaml, json, "YAML and JSON read the same");
  t.equal(yaml[0]?.expires, "2027-01-31T23:59:59.000Z", "a date expires at its end");
});

t.test("accepted findings are shown, marked, and not counted for --fail-on", async (t) => {
  const entries = parseAcceptFile(
    JSON.stringify({
      accept: [
        { finding: "ipvs-mode-deprecated", reason: "moving next quarter" },
        {
          finding: "kube-ipvs0-black-hole",
          node: "ip-10-20-4-12.eu-west-1.compute.internal",
          reason: "drained",
        },
        { finding: "kernel-too-old-for-nftables", reason: "old", expires: "2020-01-01" },
        { finding: "no-such-finding", reason: "typo" },
        { finding: "kube-ipvs0-black-hole", node: "another-node", reason: "wrong node" },
      ],
    }),
    "ok.yaml",
  );
  const r = applyAcceptances(fleet, entries, "ok.yaml");
  t.same(ids(r), ids(fleet), "no finding hidden");
  t.same(r.summary, fleet.summary, "the counts are the report's");
  const dep = r.nodes.flatMap((n) => n.findings).filter((f) => f.id === "ipvs-mode-deprecated");
  t.ok(dep.length > 0 && dep.every((f) => f.accepted?.reason === "moving next quarter"));
  t.notOk(reasonsToFail(r, "warning").some((x) => x.includes("ipvs-mode-deprecated")));
  t.ok(
    reasonsToFail(fleet, "warning").some((x) => x.includes("ipvs-mode-deprecated")),
    "without the file it counts",
  );
  t.notOk(
    reasonsToFail(r, "critical").some((x) => x.includes("kube-ipvs0-black-hole")),
    "the node's black hole",
  );
  t.ok(
    reasonsToFail(r, "error").some((x) => x.includes("kernel-too-old-for-nftables")),
    "expired: counts again",
  );
  t.equal(r.acceptances?.expired.length, 1);
  t.match(
    r.acceptances?.expired[0],
    /^\[2\] kernel-too-old-for-nftables: expired 2020-01-01T23:59:59\.000Z \(old\)/,
  );
  t.same(r.acceptances?.unmatched, [
    "[3] no-such-finding: matched no finding",
    "[4] kube-ipvs0-black-hole on another-node: matched no finding",
  ]);
  t.equal(
    reasonsToFail(r, "blocked").length,
    reasonsToFail(fleet, "blocked").length,
    "verdicts are the agent's",
  );

  const table = renderTable(r, false);
  t.match(table, /ipvs-mode-deprecated \(accepted\)/);
  t.match(table, /unmatched: \[3\] no-such-finding/);
  t.match(renderMarkdown(r), /\| warning \(accepted: moving next quarter\) \|/);
  t.match(renderMarkdown(r), /## Accepted findings\n\n- accepted by ok\.yaml: /);
  t.match(renderHtml(r), /<span class="chip c-meh">accepted: moving next quarter<\/span>/);
  t.match(renderHtml(r), /<section class="span12" id="accepted">/);
  t.match(renderCsv(r), /,accepted_findings\r\n/);
  t.match(renderCsv(r), /,ipvs-mode-deprecated\r\n/);
  const junit = renderJunit(r, "warning");
  t.match(junit, /\[accepted: moving next quarter\]/);
  t.notMatch(junit, /<failure message="reached --fail-on warning: [^"]*ipvs-mode-deprecated/);
});

t.test("a Service entry accepts a finding only when every Service it names is accepted", async (t) => {
  t.same(
    [...servicesNamed({ a: ["shop/cart (10.96.0.20:80/TCP)", "web/api:https/TCP"], b: "x" })],
    ["shop/cart", "web/api"],
  );
  const node = fleet.nodes.find((n) => n.outcome === "ok")!;
  const r0: FleetReport = {
    ...fleet,
    nodes: [
      {
        ...node,
        findings: [
          {
            id: "services-lost-in-switch",
            severity: "error",
            evidence: { lost: ["shop/cart (10.96.0.20:80/TCP)", "shop/pay (10.96.0.21:80/TCP)"] },
          },
        ],
      },
    ],
  };
  const one = applyAcceptances(
    r0,
    parseAcceptFile("accept: [{finding: services-lost-in-switch, service: shop/cart, reason: r}]", "f"),
    "f",
  );
  t.notOk(one.nodes[0]!.findings[0]!.accepted, "shop/pay is not accepted, so neither is the finding");
  t.equal(one.acceptances?.unmatched.length, 1);
  const both = applyAcceptances(
    r0,
    parseAcceptFile(
      "accept:\n- {finding: services-lost-in-switch, service: shop/cart, reason: a}\n- {finding: services-lost-in-switch, service: shop/pay, reason: b}\n",
      "f",
    ),
    "f",
  );
  t.same(both.nodes[0]!.findings[0]!.accepted, { reason: "a; b", entries: [0, 1] });
});

t.test("cluster findings match entries without a node only", async (t) => {
  const id = fleet.clusterFindings[0]!.id;
  const withNode = applyAcceptances(
    fleet,
    parseAcceptFile(JSON.stringify({ accept: [{ finding: id, node: "n", reason: "r" }] }), "f"),
    "f",
  );
  t.notOk(withNode.clusterFindings[0]!.accepted);
  const whole = applyAcceptances(
    fleet,
    parseAcceptFile(JSON.stringify({ accept: [{ finding: id, reason: "r" }] }), "f"),
    "f",
  );
  t.equal(whole.clusterFindings[0]!.accepted?.reason, "r");
  t.match(renderTable(whole, false), /ACCEPTED: r/);
});

t.test("a node blocked only by accepted findings does not count for --fail-on blocked", async (t) => {
  const node = fleet.nodes.find((n) => n.outcome === "ok")!;
  const blocker = (id: string) => ({
    id,
    severity: "error" as const,
    stage: "before" as const,
    blocksMigration: true,
    evidence: {},
  });
  const r0: FleetReport = {
    ...fleet,
    nodes: [
      { ...node, node: "one", verdict: "blocked", findings: [blocker("a-blocker")] },
      { ...node, node: "two", verdict: "blocked", findings: [blocker("a-blocker"), blocker("b-blocker")] },
    ],
  };
  t.same(reasonsToFail(r0, "blocked"), ["one: blocked", "two: blocked"], "without the file both count");
  const r = applyAcceptances(r0, parseAcceptFile("accept: [{finding: a-blocker, reason: r}]", "f"), "f");
  t.same(
    r.nodes.map((n) => n.verdict),
    ["blocked", "blocked"],
    "the verdict shown is the agent's",
  );
  t.same(reasonsToFail(r, "blocked"), ["two: blocked"], "a blocker not accepted still counts");
});

t.test(
  "a node unhealthy only through accepted findings does not count for --fail-on unhealthy",
  async (t) => {
    const node = fleet.nodes.find((n) => n.outcome === "ok")!;
    const finding = (id: string, severity: "critical" | "error" | "warning", stage: "before" | "after") => ({
      id,
      severity,
      stage,
      blocksMigration: false,
      evidence: {},
    });
    const r0: FleetReport = {
      ...fleet,
      nodes: [
        { ...node, node: "one", verdict: "unhealthy", findings: [finding("a-hole", "critical", "before")] },
        {
          ...node,
          node: "two",
          verdict: "unhealthy",
          findings: [finding("a-hole", "critical", "before"), finding("b-stale", "error", "after")],
        },
        {
          ...node,
          node: "three",
          verdict: "unhealthy",
          findings: [finding("a-hole", "critical", "before"), finding("c-note", "warning", "before")],
        },
      ],
    };
    t.same(
      reasonsToFail(r0, "unhealthy"),
      ["one: unhealthy", "two: unhealthy", "three: unhealthy"],
      "without the file all count",
    );
    const r = applyAcceptances(r0, parseAcceptFile("accept: [{finding: a-hole, reason: r}]", "f"), "f");
    t.same(
      r.nodes.map((n) => n.verdict),
      ["unhealthy", "unhealthy", "unhealthy"],
      "the verdict shown is the agent's",
    );
    t.same(
      reasonsToFail(r, "unhealthy"),
      ["two: unhealthy"],
      "an error after the switch, not accepted, still breaks the node; a warning does not",
    );
  },
);
