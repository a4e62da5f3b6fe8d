// The growth benchmark's pure parts (bench/growth): the exponent is the log-log slope, step by step
// and over all sizes; a cost that outgrows N is called superlinear; the cost each further 1,000
// Services adds; and a row measured above the load limit reads "rerun", never a figure.
import t from "tap";
import { exponent, growthVerdict, marginalPer1000, stepExponents } from "../../../bench/growth/fit.js";
import { renderGrowth, type GrowthResults, type ModeRow } from "../../../bench/growth/render.js";

const pts = (f: (n: number) => number) => [1000, 10000, 30000].map((n) => ({ n, cost: f(n) }));

t.test("exponent: the slope of log cost on log N", async (t) => {
  t.equal(exponent(pts((n) => 3 * n)).toFixed(6), "1.000000", "linear is 1");
  t.equal(exponent(pts((n) => n * n)).toFixed(6), "2.000000", "quadratic is 2");
  t.equal(exponent(pts(() => 400)).toFixed(6), "0.000000", "a fixed cost is 0");
  t.ok(Number.isNaN(exponent([{ n: 1000, cost: 5 }])), "one size: no exponent");
  t.ok(
    Number.isNaN(
      exponent([
        { n: 1000, cost: 5 },
        { n: 1000, cost: 6 },
      ]),
    ),
    "one size twice: no exponent",
  );
  const steps = stepExponents(pts((n) => (n < 20000 ? n : n * 9)));
  t.same(
    steps.map((s) => [s.from, s.to, Number(s.k.toFixed(3))]),
    [
      [1000, 10000, 1],
      [10000, 30000, 3],
    ],
    "each step on its own",
  );
});

t.test("verdict: a fixed part is at most linear; one step above N^1.15 is superlinear", async (t) => {
  t.equal(growthVerdict(pts((n) => 400 + 0.02 * n)).verdict, "at most linear");
  t.equal(growthVerdict(pts((n) => n)).verdict, "at most linear");
  const sq = growthVerdict(pts((n) => (n > 10000 ? n ** 1.5 / 100 : n)));
  t.equal(sq.verdict, "superlinear");
  t.ok(sq.worst > 1.15, "names the worst step");
  t.equal(growthVerdict([{ n: 1000, cost: 1 }]).verdict, "unknown", "one size: unknown, not linear");
});

t.test("marginal cost per 1,000 Services: constant when linear beyond a fixed part", async (t) => {
  t.same(
    marginalPer1000(pts((n) => 400 + 0.02 * n)).map((s) => Number(s.per1000.toFixed(6))),
    [20, 20],
  );
});

const scan = (cpuMs: number) => ({
  wallMs: cpuMs,
  cpuMs,
  maxRssMb: 100,
  largestProcessRssMb: 100,
  exit: 0,
  phase: "ipvs",
  verdict: "unknown",
  failedProbes: [],
});
const read = (cpuMs: number, exit = 0) => ({
  argv: "cat /proc/net/ip_vs",
  cpuMs,
  wallMs: cpuMs,
  maxRssMb: 1,
  exit,
});
const mode = (n: number, status: "ok" | "rerun", cpuMs: number, exit = 0): ModeRow => ({
  mode: "ipvs",
  n,
  scan: { env: "replay", loadavg: [status === "ok" ? 1 : 3, 1], status, value: [scan(cpuMs)] },
  floor: { env: "replay", loadavg: [1, 1], status: "ok", value: [[read(10, exit)]] },
});
const results = (rows: ModeRow[]): GrowthResults => ({
  machine: { date: "d", nproc: 2, cpuModel: "c", kernel: "k", node: "v26" },
  loadavgStart: [1],
  maxLoad: 2,
  reps: 1,
  nft11: null,
  rows,
});

t.test("render: a rerun row gives no figure and no exponent; a failed read is named", async (t) => {
  const md = renderGrowth(results([mode(1000, "ok", 400), mode(10000, "rerun", 600, 1)]));
  t.match(md, /\| ipvs \(replay\) \| 10,000 \| \*\*rerun\*\* \|/);
  t.notMatch(md, /\| ipvs \(replay\) \| 10,000 \| 600/);
  t.match(md, /\| scan CPU, ipvs \(replay\) \| — \|/, "one usable size: no exponent");
  t.match(md, /10\.0 \(exit 1\)/, "the failing read says so");
  const ok = renderGrowth(results([mode(1000, "ok", 400), mode(10000, "ok", 580)]), "exponents");
  t.match(
    ok,
    /\| scan CPU, ipvs \(replay\) \| 0\.16 \| 1,000→10,000: 0\.16 \| 1,000→10,000: 20\.0 ms \| at most linear \|/,
  );
});
