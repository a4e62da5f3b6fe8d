// The replay benchmark's pure parts (bench/replay): the replay tools print the recorded bytes with the
// recorded exit code and refuse an argv that was not recorded; the growth exponent is the log-log
// slope; a row measured above the load limit reads "rerun" and gives no figure.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { writeReplayTools, type Manifest } from "../../../bench/replay/cache.js";
import { logLogSlope, renderReplay, type ReplayResults } from "../../../bench/replay/render.js";

const call = (tool: string, args: string[], exit: number, i: number) => ({
  tool: tool as "ipset",
  args,
  exit,
  stdoutFile: `out/${i}.out`,
  stderrFile: `out/${i}.err`,
  bytes: 0,
  by: ["scan" as const],
  umlWallMs: [],
  umlCpuMs: [],
});

t.test("replay tools: recorded bytes and exit code; an argv not recorded fails and is logged", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "pxreplay-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(`${dir}/out`);
  writeFileSync(`${dir}/out/0.out`, "Name: KUBE-CLUSTER-IP\nit's 'quoted'\n");
  writeFileSync(`${dir}/out/0.err`, "");
  writeFileSync(`${dir}/out/1.out`, "");
  writeFileSync(`${dir}/out/1.err`, "ipset v7.17: The set with the given name does not exist\n");
  const m = {
    services: 1,
    calls: [call("ipset", ["list", "-terse"], 0, 0), call("ipset", ["list", "KUBE-GONE"], 1, 1)],
  } as unknown as Manifest;
  const tools = writeReplayTools(dir, m);
  const ok = spawnSync(`${tools}/ipset`, ["list", "-terse"], { encoding: "utf8" });
  t.equal(ok.status, 0);
  t.equal(ok.stdout, "Name: KUBE-CLUSTER-IP\nit's 'quoted'\n");
  const gone = spawnSync(`${tools}/ipset`, ["list", "KUBE-GONE"], { encoding: "utf8" });
  t.equal(gone.status, 1);
  t.match(gone.stderr, /does not exist/);
  const miss = spawnSync(`${tools}/ipset`, ["list", "KUBE-OTHER"], { encoding: "utf8" });
  t.equal(miss.status, 127);
  t.match(miss.stderr, /not recorded/);
  t.equal(readFileSync(`${dir}/misses.log`, "utf8"), "ipset list KUBE-OTHER\n");
});

t.test("the growth exponent is the least-squares log-log slope", async (t) => {
  t.ok(
    Math.abs(
      logLogSlope([
        [1000, 10],
        [10000, 100],
        [30000, 300],
      ]) - 1,
    ) < 1e-9,
    "linear",
  );
  t.ok(
    Math.abs(
      logLogSlope([
        [1000, 1],
        [10000, 100],
      ]) - 2,
    ) < 1e-9,
    "quadratic",
  );
  t.ok(
    Math.abs(
      logLogSlope([
        [1000, 50],
        [30000, 50],
      ]),
    ) < 1e-9,
    "flat",
  );
  t.ok(Number.isNaN(logLogSlope([[1000, 5]])), "one point gives no slope");
});

const lat = (p99: number) => ({
  requests: 100,
  errors: 0,
  p50: 1,
  p99,
  max: 9,
  eventLoop: { maxMs: 3, worstP99Ms: 2, medianP99Ms: 1, intervals: 4, over5ms: 0 },
});
const serveValue = () => ({
  window: {
    windowS: 300,
    scans: 5,
    agentCpuSPerHour: 4321,
    replayToolsCpuSPerHour: 1,
    totalCpuSPerHour: 4322,
    hourWithFullReadCpuS: 5323,
    toReady: { selfMs: 900, childMs: 10, wallMs: 3000 },
    nodeExporter: {
      cpuSPerHour: 1000,
      series: 330_411,
      ipvsSeries: 330_005,
      rssMb: 400,
      withoutIpvsCpuSPerHour: 1,
    },
    rssMb: { median: 131, max: 150 },
    hwmMb: 155,
    memory: {
      rss: 131,
      rssAnon: 70,
      rssFile: 61,
      mainHeapTotal: 20,
      mainHeapUsed: 19,
      workerHeapTotal: 36,
      workerHeapUsed: 30,
      external: 10,
      malloced: 1,
    },
    sourceAges: ['proxyscope_source_age_seconds{source="ipvs"} 239'],
  },
  metricsP99: {
    seconds: 90,
    clients: 4,
    rps: 100,
    bytes: 23_128,
    agent: { ...lat(5), scansUnderLoad: 0 },
    scanning: { ...lat(8), scansUnderLoad: 3, intervalS: 20 },
    bare: lat(4),
  },
});

t.test(
  "serve: the hour with its full read against node_exporter, and /metrics p99 against the bare server",
  async (t) => {
    const md = renderReplay({
      maxLoad: 2,
      serve: { services: 10000, env: "replay", loadavg: [1.2, 1.4], status: "ok", value: serveValue() },
    });
    t.match(md, /\| 300 s \| 5 \| 4321\.0 \| \*\*5323\.0\*\* \(start to ready: 910 ms CPU\) \|/);
    t.match(md, /\| 5\.32× \| 1\.00 \|/, "agent ÷ node_exporter, from the hour with its full read");
    t.match(
      md,
      /p99 ratio, agent ÷ bare: \*\*1\.25×\*\* with no scan in the phase; 2\.00× with scans landing/,
      "the phase without scans is the figure; the one with scans is told apart",
    );
    t.match(md, /\| the agent, no scan in the phase \(0 landed\) \|/);
    t.match(md, /\| the agent, a scan every 20 s \(3 landed\) \|/);
  },
);

t.test("a row above the load limit reads rerun and gives no figure", async (t) => {
  const scan = (cpuMs: number) => ({
    cpuMs,
    wallMs: 1,
    maxRssMb: 90,
    failedProbes: [],
    phase: "ipvs",
    verdict: "ok",
  });
  const r: ReplayResults = {
    maxLoad: 2,
    floorLoops: 20,
    ipvs: {
      1000: {
        umlScan: { phase: "ipvs", verdict: "ok", failedProbes: [] },
        umlTools: { calls: [], procCat: {}, hostLoadavg: [1, 1] },
        scan: { env: "replay", loadavg: [1.2, 1.4], status: "ok", value: [scan(400)] },
        floor: { env: "replay", loadavg: [1.4, 1.4], status: "ok", value: [{ cpuMs: 20, wallMs: 1 }] },
        misses: [],
      },
      10000: {
        umlScan: { phase: "ipvs", verdict: "ok", failedProbes: [] },
        umlTools: { calls: [], procCat: {}, hostLoadavg: [1, 1] },
        scan: { env: "replay", loadavg: [1.2, 7.5], status: "rerun", value: [scan(98765)] },
        floor: { env: "replay", loadavg: [1.4, 1.4], status: "ok", value: [{ cpuMs: 20, wallMs: 1 }] },
        misses: [],
      },
    },
  };
  r.serve = { services: 10000, env: "replay", loadavg: [1.5, 2.5], status: "rerun", value: serveValue() };
  const md = renderReplay(r);
  t.match(md, /\*\*rerun\*\* \(replay, load 1\.5→2\.5\): no figure/);
  t.notMatch(md, /4321|131\.0/, "nor a rerun serve window's");
  t.match(md, /\| 1,000 \| 400 \(replay, load 1\.2→1\.4\) \|.*\| 20\.0× \|/);
  t.match(md, /\| 10,000 \| \*\*rerun\*\* \(replay, load 1\.2→7\.5\) \|/);
  t.notMatch(md, /98765/, "a rerun row's figure is not shown");
  t.match(
    md,
    /\| 10,000 \| \*\*rerun\*\* \(replay, load 1\.2→7\.5\) \| — \| — \| 20\.0 \(replay, load 1\.4→1\.4\) \| — \|/,
    "nor its wall, RSS or ratio",
  );
});

t.test("the one-shot row gives the ratio with Node's start taken out, from the same rounds", async (t) => {
  const scan = (cpuMs: number) => ({
    cpuMs,
    wallMs: 1,
    maxRssMb: 90,
    failedProbes: [],
    phase: "ipvs",
    verdict: "ok",
  });
  const ok = <T>(value: T) => ({
    env: "replay",
    loadavg: [1, 1] as [number, number],
    status: "ok" as const,
    value,
  });
  const loops = (...ms: number[]) => ms.map((cpuMs) => ({ cpuMs, wallMs: 1 }));
  const r: ReplayResults = {
    maxLoad: 2,
    floorLoops: 20,
    ipvs: {
      10000: {
        umlScan: { phase: "ipvs", verdict: "ok", failedProbes: [] },
        umlTools: { calls: [], procCat: {}, hostLoadavg: [1, 1] },
        firstScan: ok(scan(470)),
        scan: ok([scan(390), scan(380), scan(400)]),
        floor: ok(loops(9, 10, 11)),
        nodeStart: ok(loops(19, 20, 21)),
        misses: [],
      },
    },
  };
  const md = renderReplay(r);
  // 390 / 10 = 39.0; (390 - 20) / 10 = 37.0; the first scan apart.
  t.match(md, /\| 39\.0× \| 20\.0 \(19\.0–21\.0\) \| 37\.0× \| 470 \|/);
  const rerun = structuredClone(r);
  rerun.ipvs![10000]!.nodeStart = { ...ok(loops(20)), status: "rerun", loadavg: [2.5, 2.5] };
  t.match(renderReplay(rerun), /\| 39\.0× \| \*\*rerun\*\* \(replay, load 2\.5→2\.5\) \| — \|/);
});
