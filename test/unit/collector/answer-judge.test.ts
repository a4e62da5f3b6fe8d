// The collector judges agent answers on a thread with a heap limit (collector/gather/answer-judge.ts): an
// answer whose validation outgrows it is its own node's named failure, the answers queued behind it are
// judged by a fresh thread, and the largest report the agent can send fits inside every bound.
import t from "tap";
import { readFileSync } from "node:fs";
import { AnswerJudge } from "../../../collector/gather/answer-judge.js";
import { overBounds } from "../../../common/bounded-json.js";
import {
  ANSWER_JSON_BOUNDS,
  JUDGE_HEAP_MB,
  MAX_ANSWER_BYTES,
} from "../../../collector/gather/answer-bounds.js";
import { judgeAnswer } from "../../../collector/gather/observe.js";

const recorded = readFileSync(
  new URL("../../../bench/results/samples/ipvs-10000.report.json", import.meta.url),
  "utf8",
);
const report = JSON.stringify({ ...JSON.parse(recorded), scannedAt: new Date().toISOString() });
// Within the JSON counts, but zod names every missing field of each of 150,000 empty findings.
const hostile = `{"schemaVersion":"1","findings":[${Array(150_000).fill("{}").join(",")}]}`;

t.test("a hostile answer ends its thread; the answers behind it are judged on a new one", async (t) => {
  const judge = new AnswerJudge();
  t.teardown(() => judge.close());
  const [before, bad, after, whole] = await Promise.all([
    judge.judge("report", report),
    judge.judge("fleet", hostile),
    judge.judge("report", report),
    judge.judge("report", report),
  ]);
  t.equal(before.ok, true, "the answer before it is judged");
  t.same(bad, {
    ok: false,
    outcome: "garbage",
    reason: `answer too large: parsing and validating it took more than the ${JUDGE_HEAP_MB} MB of heap an answer may use`,
  });
  t.equal(after.ok, true, "the answer queued right behind it is judged, not lost");
  t.equal(whole.ok, true);
  t.equal(judge.started, 2, "by a fresh thread");
});

// The largest report the agent's cuts allow: the recorded one plus a parity fact at its bounds (500
// Service ports, each with 4 addresses and 100 + 10 + 10 IPv6 endpoints after, gone and added).
function fullestReport(): string {
  const ep = (i: number, j: number) => `[fd00:10:244:${i.toString(16)}::${(j + 4096).toString(16)}]:8080`;
  const endpoints = (i: number, from: number, n: number) =>
    Array.from({ length: n }, (_, j) => ep(i, from + j));
  const services = Array.from({ length: 500 }, (_, i) => ({
    service: `namespace-with-a-long-name-${i}/service-with-a-long-name-${i}:https-port`,
    protocol: "TCP",
    addresses: [
      `[fd00:96::${i.toString(16)}]:443`,
      `nodeport:${30000 + i}`,
      `203.0.113.${i % 250}:443`,
      `198.51.100.${i % 250}:443`,
    ],
    status: "endpoints-differ",
    endpointsBefore: 120,
    endpointsAfter: 120,
    gone: endpoints(i, 0, 10),
    added: endpoints(i, 200, 10),
    after: endpoints(i, 300, 100),
  }));
  const r = JSON.parse(report) as { facts: Record<string, unknown> };
  r.facts.parity = {
    state: "compared",
    path: "/var/lib/proxyscope/ipvs-snapshot.json",
    takenAt: 1,
    ageSeconds: 1,
    maxAgeSeconds: 1,
    counts: { same: 0, missingAfter: 0, endpointsDiffer: 500, newAfter: 0 },
    services,
    truncated: true,
  };
  return JSON.stringify(r);
}

t.test("the largest report the agent can send is judged within the limit and the counts", async (t) => {
  const fullest = fullestReport();
  t.ok(fullest.length < MAX_ANSWER_BYTES / 1.5, `${fullest.length} bytes: well under the byte cap`);
  t.equal(
    overBounds(fullest, { ...ANSWER_JSON_BOUNDS, maxElements: ANSWER_JSON_BOUNDS.maxElements / 2 }),
    null,
    "under half the element bound",
  );
  const judge = new AnswerJudge();
  t.teardown(() => judge.close());
  const r = await judge.judge("report", fullest);
  t.equal(r.ok, true, r.ok ? "judged" : r.reason);
  t.same(r, judgeAnswer("report", fullest), "the same digest as judged in this thread");
  if (r.ok) t.equal(r.digest.parity?.differ.length, 500, "with every Service port of the parity fact");
  t.equal(judge.started, 1, "on one thread: nothing ran out of heap");
});
