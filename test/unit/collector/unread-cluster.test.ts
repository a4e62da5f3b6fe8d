import t from "tap";
import { renderHtml } from "../../../collector/render/html.js";
import { renderJson } from "../../../collector/render/json.js";
import { renderMarkdown } from "../../../collector/render/markdown.js";
import { renderTable } from "../../../collector/render/table.js";
import { goldenFleets } from "../../helpers/cluster-scenarios.js";

// With --source static and no kubeconfig the API is never asked: the cluster's facts are unread, and
// unread is never absent: no renderer may print a value (not pinned, 0 Services, kubeadm false) for them.
const report = new Map(goldenFleets()).get("no-api")!;

t.test("the scenario is the one without the API", async (t) => {
  t.equal(report.source, "static");
  t.equal(report.cluster.configSource, null);
});

t.test("the table says the configured mode was not read, and why", async (t) => {
  const out = renderTable(report, false);
  t.notMatch(out, /not pinned/);
  t.match(out, /configured mode: not read \(no API access with --source static/);
});

t.test("Markdown says not read, never not pinned", async (t) => {
  const out = renderMarkdown(report);
  t.notMatch(out, /not pinned/);
  t.match(out, /configured mode \*\*not read \(no API access with --source static/);
});

t.test("HTML: mode and Services not read, not a value", async (t) => {
  const out = renderHtml(report);
  t.notMatch(out, /not pinned/);
  t.notMatch(out, /<dt>Services<\/dt><dd>0<\/dd>/);
  t.match(out, /<dt>Services<\/dt><dd>not read \(no API access with --source static/);
  t.match(out, /<dt>Configured mode<\/dt><dd>not read \(no API access with --source static/);
});

t.test("JSON: kubeadm unread is null, not false", async (t) => {
  const j = JSON.parse(renderJson(report)) as { cluster: { kubeadm: unknown } };
  t.equal(j.cluster.kubeadm, null);
});

t.test("the timeline with the version unknown says so and places no marker", async (t) => {
  const out = renderHtml(report);
  const timeline = /<div class="timeline"[^]*?<\/section>/.exec(out)?.[0] ?? "";
  t.match(timeline, /Kubernetes version unknown/);
  t.notMatch(timeline, /you are here/);
  t.notMatch(timeline, /class="here\b/, "no marker element (its dot is drawn by .here::before)");
});

t.test("the table's NOTE keeps the reason when the note is too long, not the URL", async (t) => {
  const url = "http://ip-10-20-1-17.eu-west-1.compute.internal:9102/report/fleet";
  const reason = "connect ECONNREFUSED 10.20.1.17:9102 (is the agent's DaemonSet running here?)";
  const r = {
    ...report,
    nodes: [{ ...report.nodes[0]!, outcome: "unreachable" as const, reason: `${url}: ${reason}` }],
  };
  const out = renderTable(r, false);
  t.match(out, reason, "the whole reason");
  t.notMatch(out, "compute.internal:9102/report/fleet", "the URL gave way");
});
