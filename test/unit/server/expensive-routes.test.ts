import t from "tap";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { renderScan } from "../../../agent/server/rendered-scan.js";
import { buildApp } from "../../../agent/server/app.js";
import { AgentState } from "../../../agent/server/state.js";
import { movedWithBlackHole, reportOf } from "../../helpers/reports.js";

// /ipvs/virtual-server costs a full read of /proc/net/ip_vs (~320 ms of CPU at 10,000
// Services); /metrics and /report are rendered once per scan, never per request. All by behaviour:
// a window of an hour on a clock the test moves, so nothing depends on how fast this machine is.

const HOUR = 3_600_000;
const query = "/ipvs/virtual-server?protocol=TCP&address=10.96.0.1&port=443";

function setup(calls: number) {
  let now = 5_000_000;
  let lookups = 0;
  const state = new AgentState(new AgentMetrics({ version: "0.1.0" }), () => now);
  const app = buildApp(state, {
    lookupVirtualServer: async () => {
      lookups++;
      return { status: "not-found" };
    },
    ipvsLookupBudget: { calls, windowMs: HOUR },
    now: () => now,
  });
  return { app, state, lookups: () => lookups, tick: (ms: number) => (now += ms) };
}

t.test("the N+1th IPVS lookup in a window is refused with 429 and Retry-After", async (t) => {
  const { app, lookups, tick } = setup(3);
  t.teardown(() => app.close());
  for (let i = 0; i < 3; i++) t.equal((await app.inject(query)).statusCode, 404, `lookup ${i + 1} runs`);
  const over = await app.inject(query);
  t.equal(over.statusCode, 429, "the 4th in the window");
  t.equal(over.headers["retry-after"], "3600", "until the window ends");
  t.match(over.json(), { error: /budget spent: 3 per 3600 s/ });
  t.equal(lookups(), 3, "the refused call read nothing");
  tick(HOUR / 2);
  t.equal((await app.inject(query)).headers["retry-after"], "1800", "half an hour later: half an hour left");
  t.equal(
    (await app.inject("/ipvs/virtual-server?protocol=TCP")).statusCode,
    400,
    "a bad query costs nothing",
  );
  tick(HOUR / 2);
  t.equal((await app.inject(query)).statusCode, 404, "a new window: allowed again");
  t.equal(lookups(), 4);
});

t.test("/metrics and /report/summary: rendered once per scan, whatever the number of requests", async (t) => {
  const { app, state } = setup(10);
  t.teardown(() => app.close());
  // A render reads every family once, build info first (agent-metrics.ts renders family by family).
  let renders = 0;
  const registry = state.metrics.registry;
  const single = registry.getSingleMetricAsString.bind(registry);
  registry.getSingleMetricAsString = (name: string) => {
    if (name === "proxyscope_build_info") renders++;
    return single(name);
  };
  state.record(await renderScan(reportOf(movedWithBlackHole())));
  const first = await app.inject("/metrics");
  t.equal(first.statusCode, 200);
  t.match(first.body, /proxyscope_node_verdict/);
  for (let i = 0; i < 20; i++) t.equal((await app.inject("/metrics")).body, first.body);
  t.equal(renders, 1, "one render for one scan and 21 scrapes");
  state.record(await renderScan(reportOf(movedWithBlackHole())));
  const second = await app.inject("/metrics");
  t.match(second.body, /proxyscope_scans_total 2/);
  t.equal(renders, 2, "the next scan renders again");

  let serialised = 0;
  const stringify = JSON.stringify;
  JSON.stringify = ((...a: Parameters<typeof JSON.stringify>) => {
    serialised++;
    return stringify(...a);
  }) as typeof JSON.stringify;
  try {
    for (let i = 0; i < 10; i++) {
      t.equal((await app.inject("/report")).statusCode, 200);
      t.equal((await app.inject("/report/summary")).statusCode, 200);
    }
  } finally {
    JSON.stringify = stringify;
  }
  t.equal(serialised, 0, "no report or summary is serialised per request");
  t.match(JSON.parse((await app.inject("/report/summary")).body), { node: "node-a", verdict: /./ });
});
