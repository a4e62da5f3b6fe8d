// Steady-scan CPU of one build, for A/B runs of two builds alternated in the same namespace:
// one scan fills the cache, three settle, then 20 steady scans are measured (agent CPU, its
// tools' CPU) under the V8 profiler, whose profile is written beside the figures. Run inside a namespace
// built by `node dist/bench/nft-calls.js --n 10000 --ns NAME --keep`:
//   DIST=/path/to/other/dist ip netns exec NAME node bench/alt/steady-ab.mjs [OUT.cpuprofile]
import { Session } from "node:inspector/promises";
import process from "node:process";
import { writeFileSync } from "node:fs";
import { URL, fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const R = process.env.DIST ?? `${REPO}/dist`;
const { ToolRunner } = await import(`${R}/agent/io/run.js`);
const { ScanCache } = await import(`${R}/agent/probes/scan-cache.js`);
const { scanNode } = await import(`${R}/agent/scan.js`);
const { kubeProxyStandin } = await import(`${REPO}/dist/bench/lib/kube-proxy-standin.js`);
const { benchScanInput, childrenCpuMs } = await import(`${REPO}/dist/bench/node/scan-once.js`);

const kp = await kubeProxyStandin(REPO);
try {
  const tools = new ToolRunner();
  const calls = [];
  for (const m of ["run", "streamLines"]) {
    const f = tools[m].bind(tools);
    tools[m] = (tool, args, ...rest) => {
      calls.push([tool, ...args].join(" "));
      return f(tool, args, ...rest);
    };
  }
  const input = { ...benchScanInput(tools), kubeProxyMetricsUrl: kp.url };
  const cache = new ScanCache(3_600_000);
  const once = async () => {
    const c0 = process.cpuUsage();
    const k0 = childrenCpuMs();
    const r = await scanNode({ ...input, cache });
    const c = process.cpuUsage(c0);
    return {
      self: (c.user + c.system) / 1000,
      tools: childrenCpuMs() - k0,
      reused: r.sources?.every((s) => s.reused),
    };
  };
  await once();
  for (let i = 0; i < 3; i++) await once();
  calls.length = 0;
  await once();
  const perScan = [...calls];
  const s = new Session();
  s.connect();
  await s.post("Profiler.enable");
  await s.post("Profiler.start");
  const N = 20;
  let self = 0;
  let tl = 0;
  let reused = true;
  for (let i = 0; i < N; i++) {
    const r = await once();
    self += r.self;
    tl += r.tools;
    reused &&= r.reused === true;
  }
  const { profile } = await s.post("Profiler.stop");
  if (process.argv[2]) writeFileSync(process.argv[2], JSON.stringify(profile));
  process.stdout.write(
    `${JSON.stringify({ dist: R, steadyScans: N, selfCpuMs: self / N, toolsCpuMs: tl / N, allReused: reused, callsPerScan: perScan })}\n`,
  );
} finally {
  kp.stop();
}
