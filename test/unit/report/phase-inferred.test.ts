import t from "tap";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { renderScan } from "../../../agent/server/rendered-scan.js";
import { renderText } from "../../../agent/render/text.js";
import { NodeReport } from "../../../agent/report/schema.js";
import { summaryOf } from "../../../agent/view/summary.js";
import { emptyFacts, noKernelState, refused, vs } from "../../helpers/facts.js";
import { movedWithBlackHole, reportOf } from "../../helpers/reports.js";

// A phase inferred from kernel state is said so in the verdict, the report's view
// summary, the text report and the metrics — not only in a probe list a reader may skip.

const guessed = () =>
  reportOf(
    {
      ...emptyFacts(),
      ...noKernelState,
      ipvs: {
        available: true,
        virtualServerCount: 1,
        realServerCount: 2,
        schedulers: { rr: 1 },
        virtualServers: [vs("10.96.0.1", 443, { realServers: 2 })],
        timeouts: null,
      },
      kubeIpvs0: {
        present: true,
        kind: "dummy",
        operState: "DOWN",
        flags: [],
        addresses: [{ family: "inet", address: "10.96.0.1", prefixLen: 32 }],
      },
    },
    { "kube-proxy-mode": refused },
  );

const samples = async (m: AgentMetrics) =>
  (await m.exposition()).split("\n").filter((l) => l !== "" && !l.startsWith("#"));

t.test("a guessed phase: verdict unknown, summary, text and metrics say inferred", async (t) => {
  const r = guessed();
  t.equal(r.phase, "ipvs");
  t.equal(r.phaseSource, "kernel-state");
  t.equal(r.verdict, "unknown", "a guess is not 'attention' nor 'ready'");
  t.equal(NodeReport.parse(r).view?.phaseInferred, true);
  t.equal(summaryOf({ ...r, view: undefined }).phaseInferred, true, "rebuilt from the facts too");
  const text = renderText(r, false);
  t.match(text, /verdict: +unknown \(the phase is inferred from kernel state/);
  const m = new AgentMetrics({ version: "0.1.0" });
  m.recordScan((await renderScan(r)).metrics);
  t.ok((await samples(m)).includes("proxyscope_node_phase_inferred 1"));
});

t.test("kube-proxy's own answer: not inferred, and the metric says 0", async (t) => {
  const r = reportOf(movedWithBlackHole());
  t.equal(r.view?.phaseInferred, false);
  t.notMatch(renderText(r, false), /inferred/);
  const m = new AgentMetrics({ version: "0.1.0" });
  m.recordScan((await renderScan(r)).metrics);
  t.ok((await samples(m)).includes("proxyscope_node_phase_inferred 0"));
});
