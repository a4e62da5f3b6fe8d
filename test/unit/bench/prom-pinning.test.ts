import t from "tap";
import { spawnSync } from "node:child_process";
import {
  allowedCpus,
  busyOn,
  coreBusyMsFrom,
  cpuCount,
  parsePinning,
  pinnedArgv,
} from "../../../bench/fleet/pinning.js";
import { defaultPinning, renderPromBench, startedQuiet } from "../../../bench/fleet/prometheus.js";

t.test("pinning: the flag, the CPU count Prometheus's GOMAXPROCS gets, the argv", async (t) => {
  t.same(parsePinning("1:0"), { prometheus: "1", client: "0" });
  t.same(parsePinning("2-3:0,1"), { prometheus: "2-3", client: "0,1" });
  t.equal(parsePinning("none"), "none");
  t.equal(parsePinning("1"), null);
  t.equal(parsePinning("a:b"), null);
  t.equal(cpuCount("1"), 1);
  t.equal(cpuCount("0-3,6"), 5);
  t.same(pinnedArgv("0", ["node", "x.js"]), ["taskset", "-c", "0", "node", "x.js"]);
  t.same(pinnedArgv(null, ["node", "x.js"]), ["node", "x.js"]);
  t.same(defaultPinning(2), { prometheus: "1", client: "0" });
  t.equal(defaultPinning(1), null);
});

t.test("pinning: taskset really holds a child to the CPU named, and /proc says so", async (t) => {
  const [cmd, ...args] = pinnedArgv("0", ["grep", "Cpus_allowed_list", "/proc/self/status"]);
  const r = spawnSync(cmd!, args, { encoding: "utf8", timeout: 10_000 });
  t.match(String(r.stdout), /Cpus_allowed_list:\s*0\n/);
  t.match(allowedCpus(process.pid), /^[\d,-]+$/);
});

t.test("pinning: each core's busy time from /proc/stat, idle and iowait left out", async (t) => {
  const stat = [
    "cpu  300 0 100 900 50 0 0 0 0 0",
    "cpu0 100 10 50 400 20 5 5 0 0 0",
    "cpu1 200 0 50 500 30 0 0 10 0 0",
    "intr 1 2 3",
  ].join("\n");
  const a = coreBusyMsFrom(stat);
  t.same(a, { "0": 1700, "1": 2600 });
  const b = { "0": 2700, "1": 2700 };
  t.equal(busyOn("0", a, b), 1000);
  t.equal(busyOn("1", a, b), 100);
  t.equal(busyOn("0-1", a, b), 1100);
});

t.test("load rule: a run counts when the load it started at was below the limit", async (t) => {
  t.equal(
    startedQuiet({ wallMs: 1, loadavg: [1.9, 2.6] }, 2),
    true,
    "the load during is reported, not judged",
  );
  t.equal(startedQuiet({ wallMs: 1, loadavg: [2.0, 1.2] }, 2), false);
  const run = (l0: number, wallMs: number) => ({
    wallMs,
    cpuMs: 1000,
    maxRssMb: 100,
    exit: 0,
    loadavg: [l0, 2.5],
    othersMs: { prometheus: 40, client: 120 },
  });
  const floor = (l0: number, wallMs: number) => ({ wallMs, loadavg: [l0, 2.1] });
  const md = renderPromBench(
    {
      nodes: 50000,
      series: 2200000,
      runs: { after: [run(1.2, 9000), run(2.4, 30000), run(1.5, 11000)] },
      floors: { "queries of after": [floor(1.0, 6000), floor(1.1, 8000)] },
      pinning: { prometheus: { cpus: "1", GOMAXPROCS: 1 }, collector: { cpus: "0" } },
    },
    2,
  );
  // The run that started at 2.4 is out: median of 9 and 11 s against the floors' 7 s.
  t.match(md, /\| after \| 10\.00 s \(9\.00, 11\.00\) \|.*\| 7\.00 s \| 1\.43× \|.*\| 1 \|/);
  t.match(md, /1\.2→2\.5, 2\.4→2\.5, 1\.5→2\.5; 1\.0→2\.1, 1\.1→2\.1/);
  t.match(
    md,
    /Prometheus on CPU 1 \(GOMAXPROCS=1\).*on CPU 0.*runs 0\.04 \/ 0\.12 s, floors 0\.00 \/ 0\.00 s/,
  );
});
