import t from "tap";
import { NodeReport } from "../../../agent/report/schema.js";
import { summaryOf } from "../../../agent/view/summary.js";
import { observationFromReport } from "../../../collector/gather/observe.js";
import { movedWithBlackHole, reportOf } from "../../helpers/reports.js";

// Agents and collectors are upgraded at different times: each must read the other's reports.
const wire = () => JSON.parse(JSON.stringify(reportOf(movedWithBlackHole()))) as Record<string, unknown>;

t.test("a report from an older agent, lacking a fact key and the view, parses", async (t) => {
  const old = wire();
  const facts = old.facts as Record<string, unknown>;
  delete facts.kubeProxyHealth;
  delete facts.kernelModules;
  delete old.view;
  const r = NodeReport.safeParse(old);
  t.ok(r.success, r.success ? "parsed" : r.error.message);
  if (!r.success) return;
  t.equal(r.data.facts.kubeProxyHealth, null, "a missing fact reads as not read, never as a value");
  t.equal(r.data.facts.kernelModules, null);
  t.equal(r.data.view, undefined);
  const view = summaryOf(r.data);
  t.equal(view.blackHoledAddresses, 3, "the view is rebuilt from the facts");
  t.equal(view.runningMode, "nftables");
  t.equal(observationFromReport(r.data, null).blackHoledAddresses, 3, "the collector reads it the same way");
});

t.test("a report from a newer agent, with keys this one does not know, parses", async (t) => {
  const newer = wire();
  (newer.facts as Record<string, unknown>).someFutureProbe = { anything: [1, 2, 3] };
  (newer.view as Record<string, unknown>).someFutureCount = 7;
  newer.someFutureSection = { x: true };
  const r = NodeReport.safeParse(newer);
  t.ok(r.success, r.success ? "parsed" : r.error.message);
  if (!r.success) return;
  t.equal(r.data.view?.blackHoledAddresses, 3);
  t.equal(r.data.facts.proxyMode?.mode, "nftables");
});

t.test("a known key with a wrong shape is still refused", async (t) => {
  const bad = wire();
  (bad.facts as Record<string, unknown>).kernel = { release: 6 };
  t.notOk(NodeReport.safeParse(bad).success);
});
