// The collector's PromQL reads the agent's gauges by name: every name a query uses must be a metric the
// agent's real registry exposes after a scan, or the Prometheus source would report every node as no-data.
import http from "node:http";
import type { AddressInfo } from "node:net";
import t from "tap";
import { METRIC } from "../../../../agent/contract.js";
import { AgentMetrics } from "../../../../agent/metrics/agent-metrics.js";
import { renderScan } from "../../../../agent/server/rendered-scan.js";
import {
  gatherFromPrometheus,
  observationsFromSeries,
  parseQueryAnswer,
  parityFromSeries,
  queries,
  queryUrl,
  QUERY_CONCURRENCY,
} from "../../../../collector/sources/prometheus.js";
import { movedWithBlackHole, reportOf } from "../../../helpers/reports.js";

t.test("every metric name in the collector's PromQL is in the agent's registry output", async (t) => {
  const m = new AgentMetrics({ version: "0.1.0" });
  // With parity compared, so the parity counts and snapshot time are exposed too.
  m.recordScan(
    (
      await renderScan(
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
      )
    ).metrics,
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
  t.same(
    parityFromSeries(["compared"], [...all, ["arp_only", 3]], 1000, 1900)?.counts,
    { same: 8, missingAfter: 2, endpointsDiffer: 1, newAfter: 0, arpOnly: 3 },
    "an agent that counts ARP-only addresses: carried, as its /report carries it",
  );
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

t.test(
  "a Prometheus that never answers is a named failure at the gather's deadline, not zeros",
  async (t) => {
    const asked: string[] = [];
    const hung = http.createServer((req) => void asked.push(req.url!));
    await new Promise<void>((r) => hung.listen(0, "127.0.0.1", () => r()));
    t.teardown(() => {
      hung.closeAllConnections();
      return new Promise<void>((r) => hung.close(() => r()));
    });
    const url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
    const r = await gatherFromPrometheus({
      url,
      nodeLabel: "node",
      timeoutMs: 2000,
      maxBytes: 1 << 20,
      staleAfterS: 600,
      now: () => Date.now() / 1000,
    });
    t.notOk(r.ok, "no observations");
    if (!r.ok) t.match(r.error, /^Prometheus at http:\/\/127\.0\.0\.1:\d+: .*the gather's 2000 ms deadline/);
    // A few at a time, and none sent once the first has failed the gather.
    t.ok(asked.length <= QUERY_CONCURRENCY, `${asked.length} queries reached it`);
    // The time left, never more than the gather's deadline (exactly it when no millisecond has passed).
    for (const u of asked) {
      const left = new URL(u, url).searchParams.get("timeout") ?? "";
      t.match(left, /^\d\.\d{3}$/, "Prometheus told the time left");
      t.ok(Number(left) > 0 && Number(left) <= 2, `${left} s left of 2 s`);
    }
  },
);

t.test("the queries filter before grouping and ask only for what the report reads", async (t) => {
  const q = queries("node");
  t.equal(q.phase, `max by (node, phase) (${METRIC.nodePhase} == 1)`);
  t.equal(q.probeFailed, `max by (node, probe) (${METRIC.probeSuccess} == 0)`);
  t.notOk("kubeIpvs0Present" in q, "kube-ipvs0's presence is not in the report");
  t.equal(
    queryUrl("http://p:9090/", "/api/v1/query", { query: "up" }, 1234),
    "http://p:9090/api/v1/query?query=up&timeout=1.234",
  );
});

t.test(
  "an answer is judged sample by sample: one bad sample among many refuses the whole answer",
  async (t) => {
    const good = (i: number) => ({
      metric: { node: `node-${i}`, phase: "ipvs" },
      value: [1764417600.5, "1"],
    });
    const answer = (last: unknown, extra: Record<string, unknown> = {}) =>
      JSON.stringify({
        status: "success",
        data: { resultType: "vector", result: [...Array.from({ length: 1000 }, (_, i) => good(i)), last] },
        ...extra,
      });
    const ok = parseQueryAnswer(answer(good(1000), { warnings: ["w"] }), "q");
    t.ok(ok.ok, "a good answer, with Prometheus's warnings beside it");
    t.equal(ok.ok && ok.value.length, 1001);
    t.equal(ok.ok && ok.value[1000]!.metric.node, "node-1000");
    for (const [why, last] of [
      ["a label that is not a string", { metric: { node: 7 }, value: [1, "1"] }],
      ["no metric", { value: [1, "1"] }],
      ["a metric that is an array", { metric: ["node"], value: [1, "1"] }],
      ["a value with three parts", { metric: {}, value: [1, "1", "2"] }],
      ["a time that is a string", { metric: {}, value: ["1", "1"] }],
      ["a value that is a number", { metric: {}, value: [1, 1] }],
      ["a sample that is null", null],
    ] as const) {
      const r = parseQueryAnswer(answer(last), "max by (node) (x)");
      t.notOk(r.ok, why);
      t.match(!r.ok && r.error, /^unexpected answer to max by \(node\) \(x\)/, `${why}: named`);
    }
    const matrix = JSON.stringify({ status: "success", data: { resultType: "matrix", result: [] } });
    t.notOk(parseQueryAnswer(matrix, "q").ok, "a range answer where an instant one belongs");
  },
);

t.test("answers indexed as they arrive, in any order, give what the whole set gives at once", async (t) => {
  const q = queries("node");
  const names = Object.keys(q) as (keyof typeof q)[];
  const sample = (node: string, labels: Record<string, string>, v: string) => ({
    metric: { node, ...labels },
    value: [1764417600, v],
  });
  const nodes = Array.from({ length: 40 }, (_, i) => `node-${(i * 7) % 40}`);
  const answers: Record<string, unknown[]> = {
    phase: nodes.map((n, i) => sample(n, { phase: i % 3 ? "ipvs" : "nftables" }, "1")),
    verdict: nodes.map((n) => sample(n, { verdict: "attention" }, "1")),
    findings: nodes.flatMap((n, i) => [
      sample(n, { id: "ipvs-mode-deprecated", severity: "warning" }, "1"),
      ...(i % 4 ? [] : [sample(n, { id: "some-newer-finding", severity: "error" }, "2")]),
    ]),
    nftablesCapable: nodes.map((n, i) => sample(n, {}, i % 5 ? "1" : "0")),
    virtualServers: nodes.map((n, i) => sample(n, {}, String(i * 3))),
    kubeIpvs0Addresses: nodes.map((n) => sample(n, {}, "NaN")),
    blackHoled: nodes.slice(5).map((n) => sample(n, {}, "0")),
    probeFailed: nodes.slice(0, 3).map((n) => sample(n, { probe: "ipvs" }, "0")),
    lastScan: nodes.map((n) => sample(n, {}, "1764417570")),
    buildInfo: nodes.map((n) => sample(n, { version: "0.1.0" }, "1")),
    parityState: nodes.map((n) => sample(n, { state: "compared" }, "1")),
    parityServices: nodes.flatMap((n) =>
      ["same", "missing_after", "endpoints_differ", "new_after"].map((s) => sample(n, { status: s }, "2")),
    ),
    paritySnapshot: nodes.map((n) => sample(n, {}, "1764417000")),
  };
  // The last query in the list answers first and the first last: arrival order is the reverse.
  const server = http.createServer((req, res) => {
    const promql = new URL(req.url!, "http://x").searchParams.get("query");
    const i = names.findIndex((n) => q[n] === promql);
    setTimeout(
      () =>
        res.end(
          JSON.stringify({ status: "success", data: { resultType: "vector", result: answers[names[i]!] } }),
        ),
      (names.length - i) * 15,
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const nowS = 1764417600;
  const got = await gatherFromPrometheus({
    url,
    nodeLabel: "node",
    timeoutMs: 10_000,
    maxBytes: 1 << 20,
    staleAfterS: 600,
    now: () => nowS,
  });
  const whole = observationsFromSeries(answers as never, "node", url, nowS, 600);
  t.ok(got.ok);
  t.equal(whole.length, 40);
  t.same(got.ok && got.value, whole);
});
