// The collector's PromQL reads the agent's gauges by name: every name a query uses must be a metric the
// agent's real registry exposes after a scan, or the Prometheus source would report every node as no-data.
import t from "tap";
import { METRIC } from "../../../../agent/contract.js";
import { AgentMetrics } from "../../../../agent/metrics/agent-metrics.js";
import { parityFromSeries, queries } from "../../../../collector/sources/prometheus.js";
import { movedWithBlackHole, reportOf } from "../../../helpers/reports.js";

t.test("every metric name in the collector's PromQL is in the agent's registry output", async (t) => {
  const m = new AgentMetrics({ version: "0.1.0" });
  // With parity compared (#17), so the parity counts and snapshot time are exposed too.
  m.recordScan(
    reportOf(
      movedWithBlackHole({
        parity: {
          state: "compared",
          path: "/var/lib/proxyscope/ipvs-snapshot.json",
          takenAt: 1_764_417_000,
          ageSeconds: 600,
          maxAgeSeconds: 86_400,
          counts: { same: 3, missingAfter: 1, endpointsDiffer: 0, newAfter: 0 },
          services: [],
          truncated: false,
        },
      }),
    ),
  );
  const exposition = await m.exposition();
  const families = new Set([...exposition.matchAll(/^# TYPE (\S+) /gm)].map((x) => x[1]!));
  const used = new Set<string>();
  for (const [name, promql] of Object.entries(queries("node"))) {
    const names = [...promql.matchAll(/\bproxyscope_[a-z0-9_]+/g)].map((x) => x[0]);
    t.ok(names.length > 0, `${name} reads a proxyscope metric`);
    for (const n of names) {
      used.add(n);
      t.ok(families.has(n), `${name}: ${n} is exposed by the agent`);
    }
  }
  t.ok(used.size >= 10, `the queries read ${used.size} metrics`);
});

t.test("the queries take their names from the agent's names module", async (t) => {
  const q = queries("node");
  t.match(q.phase, METRIC.nodePhase);
  t.match(q.buildInfo, METRIC.buildInfo);
  t.match(q.probeFailed, METRIC.probeSuccess);
  // A name the agent never exposed would fail the test above; a name missing from METRIC fails the build.
  for (const name of Object.values(METRIC)) t.match(name, /^proxyscope_[a-z0-9_]+$/, name);
});

t.test("parity from the gauges: counts only when compared and whole; absent is not reported", async (t) => {
  const all = [
    ["same", 8],
    ["missing_after", 2],
    ["endpoints_differ", 1],
    ["new_after", 0],
  ] as const;
  t.same(parityFromSeries(["compared"], all, 1000, 1900), {
    state: "compared",
    snapshotAgeSeconds: 900,
    counts: { same: 8, missingAfter: 2, endpointsDiffer: 1, newAfter: 0 },
    lost: [],
  });
  t.equal(parityFromSeries([], [], null, 1900), null, "no state series: not reported, never zero");
  t.equal(
    parityFromSeries(["compared"], all.slice(0, 3), 1000, 1900),
    null,
    "a count missing: not a reading",
  );
  t.equal(
    parityFromSeries(["compared", "stale"], all, 1000, 1900),
    null,
    "two current states: not a reading",
  );
  t.same(parityFromSeries(["stale"], [], 1000, 1900 + 86_400), {
    state: "stale",
    snapshotAgeSeconds: 87_300,
    counts: null,
    lost: [],
  });
});
