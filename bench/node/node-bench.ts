// Everything measured on one node, run inside that node's network namespace (a UML guest or a
// namespace on the host), against the kernel state already built there. Writes one JSON file.
// bench/run.ts runs it in each phase; how to run it by hand: USAGE, which --help prints.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { request, Agent } from "node:http";
import { fileURLToPath } from "node:url";
import { benchArgs, count, required, seconds, usageError } from "../lib/args.js";
import { ipvsFloor, IPVS_REFERENCE, nftFloor, type FloorRead } from "../lib/floor.js";
import { kubeProxyStandin } from "../lib/kube-proxy-standin.js";
import { childrenCpuMs, type ToolCall } from "./scan-once.js";
import { scansTotal, spawnAgentServe } from "../lib/agent-serve.js";

const USAGE = `\
Usage: node dist/bench/node/node-bench.js --out FILE [--label ipvs-1000] [--reps 5] [--floor ipvs|nft]
         [--baseline 'nft -j list table ip kube-proxy']... [--baseline-reps K] [--profile DIR]
         [--cpu-hour-s 120] [--kube-proxy-standin] [--load-s 10] [--concurrency 8] [--rss-scans 1000]
Everything measured on this node, inside its network namespace, against the state already built
there; results to FILE (JSON), beside it FILE.report.json (the first scan's report) and, with
--load-s, FILE.metrics.txt (the agent's /metrics).
  --reps K               scans, and runs of the floor (default 5)
  --floor ipvs|nft       which reads make the floor (default nft)
  --baseline CMD         a command timed --baseline-reps times (default: --reps), argv split on spaces
  --profile DIR          one more scan under the CPU profiler, its profile in DIR
  --cpu-hour-s S         row (a): S seconds of \`serve\` at defaults beside node_exporter (default 0: none)
  --kube-proxy-standin   row (a)'s kube-proxy /metrics from the stand-in (nftables mode in a namespace)
  --load-s S             rows (d) and (e): S seconds of clients while scans run back to back (0: none;
                         default 10), --concurrency clients when saturating (default 8)
  --rss-scans N          with --load-s, then RSS after each of N further scans (default 0)`;

const DIST = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const SCAN_ONCE = `${DIST}/bench/node/scan-once.js`;
const AGENT_CLI = `${DIST}/agent/cli.js`;
const ELD_PRELOAD = `${DIST}/bench/node/eld-preload.js`;
const STATIC_SERVE = `${DIST}/bench/node/static-serve.js`;
const load1 = () => loadavg()[0]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (m: string) => process.stderr.write(`[node-bench] ${m}\n`);

interface ScanSample {
  wallMs: number;
  cpuMs: number;
  selfCpuMs: number;
  toolsCpuMs: number;
  maxRssMb: number;
  reportBytes: number;
  phase: string;
  verdict: string;
  failedProbes: string[];
  probeMs: Record<string, number>;
  calls: ToolCall[];
}

function scanOnce(extra: string[] = [], nodeArgs: string[] = []): ScanSample {
  const r = spawnSync(process.execPath, [...nodeArgs, SCAN_ONCE, ...extra], {
    encoding: "utf8",
    maxBuffer: 64 * 2 ** 20,
  });
  if (r.status !== 0) throw new Error(`scan-once failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as ScanSample;
}

/**
 * The new floor: each read of the list once, in sequence, under /usr/bin/time; summed. GNU time
 * prints CPU truncated to 10 ms, which a list of cheap reads sums to nothing: the floor's CPU is the
 * reaped children's total over the whole sequence instead (kernel-accumulated, truncated once).
 */
function floorOnce(reads: readonly FloorRead[]) {
  const c0 = childrenCpuMs();
  const per = reads.map((r) => ({ argv: r.argv, ...timed(r.argv) }));
  return {
    wallMs: per.reduce((a, r) => a + r.wallMs, 0),
    cpuMs: childrenCpuMs() - c0,
    perReadCpuSumMs: per.reduce((a, r) => a + r.cpuMs, 0),
    reads: per,
  };
}

/** A command under GNU time: wall, CPU and the peak RSS of the tool itself. */
function timed(argv: readonly string[]) {
  const r = spawnSync("/usr/bin/time", ["-f", "@@TIME %e %U %S %M", ...argv], {
    encoding: "utf8",
    stdio: ["ignore", "ignore", "pipe"],
    maxBuffer: 16 * 2 ** 20,
  });
  const m = /@@TIME (\S+) (\S+) (\S+) (\S+)/.exec(r.stderr ?? "");
  if (!m) throw new Error(`${argv.join(" ")}: no timing (${r.stderr?.slice(-300)})`);
  return {
    wallMs: Number(m[1]) * 1000,
    cpuMs: (Number(m[2]) + Number(m[3])) * 1000,
    maxRssMb: Number(m[4]) / 1024,
    exit: r.status,
  };
}

function procStatus(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** CPU of a process, ms: user + sys, plus its reaped children's (the tools the agent ran) if asked. */
function procCpuMs(pid: number, withChildren = false): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat
    .slice(stat.lastIndexOf(")") + 2)
    .split(" ")
    .map(Number);
  const ticks = f[11]! + f[12]! + (withChildren ? f[13]! + f[14]! : 0);
  return (ticks * 1000) / 100;
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });
function get(
  port: number,
  path: string,
  timeoutMs = 600_000,
): Promise<{ status: number; body: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request({ host: "127.0.0.1", port, path, agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString("utf8"),
          ms: performance.now() - t0,
        }),
      );
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on("error", reject);
    req.end();
  });
}

async function waitFor(port: number, path: string, deadlineMs: number): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    try {
      if ((await get(port, path, 5000)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) throw new Error(`127.0.0.1:${port}${path} not ready within ${deadlineMs} ms`);
    await sleep(200);
  }
}

const seriesCount = (text: string) => text.split("\n").filter((l) => l !== "" && !l.startsWith("#")).length;

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), 5000).unref();
  });
}

async function loadPhase(port: number, seconds: number, workers: number, rps: number) {
  const lat: Record<string, number[]> = { "/metrics": [], "/report": [] };
  const bytes: Record<string, number> = {};
  let errors = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const gapMs = rps > 0 ? (1000 * workers) / rps : 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      let i = w;
      let next = t0 + (gapMs * w) / workers;
      while (performance.now() < end) {
        if (gapMs > 0) {
          const wait = next - performance.now();
          if (wait > 0) await sleep(wait);
          next += gapMs;
        }
        const path = i++ % 2 === 0 ? "/metrics" : "/report";
        try {
          const r = await get(port, path, 30_000);
          if (r.status !== 200) errors++;
          lat[path]!.push(r.ms);
          bytes[path] = r.body.length;
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsedS = (performance.now() - t0) / 1000;
  const requests = lat["/metrics"]!.length + lat["/report"]!.length;
  return {
    seconds: elapsedS,
    workers,
    targetRps: rps,
    rps: requests / elapsedS,
    latencyMs: lat,
    bytes,
    errors,
  };
}

/** The agent serving from its last scan while scans run back to back; C clients for `seconds`. */

/** The scan thread's memory-reducing GCs so far (server/heap-release.ts): how often a mode pays for one. */
const heapReleases = (metrics: string) =>
  Number(/^proxyscope_scan_heap_releases_total (\S+)/m.exec(metrics)?.[1] ?? "NaN");

/**
 * Row (a): the agent's CPU over a window of `serve` with default settings (60 s interval), beside
 * node_exporter with its default collectors minus ipvs; both scraped every 30 s, as Prometheus would.
 * The window starts once the agent is ready (its first scan done) and is scaled to an hour.
 */
const NODE_EXPORTER = "/usr/bin/prometheus-node-exporter";

async function cpuHour(windowS: number, agentArgs: string[] = []) {
  const port = 9978;
  const nePort = 9100;
  // Checked before the agent starts: a missing binary made spawn() emit an unhandled 'error' that
  // ended the whole benchmark, rows (d) and (e) with it. scripts/bench.sh installs it.
  if (!existsSync(NODE_EXPORTER))
    throw new Error(`${NODE_EXPORTER} not found (Debian package prometheus-node-exporter)`);
  const agentChild = spawnAgentServe(AGENT_CLI, port, agentArgs);
  const ne = spawn(NODE_EXPORTER, ["--no-collector.ipvs", `--web.listen-address=127.0.0.1:${nePort}`], {
    stdio: ["ignore", "ignore", "ignore"],
  });
  // Any other spawn failure: logged, and the wait for its port below fails the row, not the run.
  ne.on("error", (e) => log(`node_exporter: ${e.message}`));
  try {
    await waitFor(port, "/readyz", 900_000);
    await waitFor(nePort, "/", 60_000);
    const load0 = load1();
    const a0 = procCpuMs(agentChild.pid!, true);
    const n0 = procCpuMs(ne.pid!, true);
    const first = (await get(port, "/metrics")).body;
    const s0 = scansTotal(first);
    const t0 = performance.now();
    let neSeries = 0;
    let scrapes = 0;
    for (let k = 0; performance.now() - t0 < windowS * 1000; k++) {
      const due = t0 + k * 30_000;
      if (due > t0 + windowS * 1000) break;
      await sleep(Math.max(0, due - performance.now()));
      const [, n] = await Promise.all([get(port, "/metrics"), get(nePort, "/metrics")]);
      neSeries = seriesCount(n.body);
      scrapes++;
    }
    await sleep(Math.max(0, t0 + windowS * 1000 - performance.now()));
    const elapsedS = (performance.now() - t0) / 1000;
    const agentCpuMs = procCpuMs(agentChild.pid!, true) - a0;
    const neCpuMs = procCpuMs(ne.pid!, true) - n0;
    const last = (await get(port, "/metrics")).body;
    const s1 = scansTotal(last);
    const r = {
      windowS: elapsedS,
      scrapesEach: scrapes,
      scans: s1 - s0,
      heapReleases: heapReleases(last) - heapReleases(first),
      agentCpuMs,
      nodeExporterCpuMs: neCpuMs,
      agentCpuSPerHour: (agentCpuMs / 1000) * (3600 / elapsedS),
      nodeExporterCpuSPerHour: (neCpuMs / 1000) * (3600 / elapsedS),
      agentRssMb: procStatus(agentChild.pid!, "VmRSS"),
      nodeExporterRssMb: procStatus(ne.pid!, "VmRSS"),
      nodeExporterPeakRssMb: procStatus(ne.pid!, "VmHWM"),
      nodeExporterSeries: neSeries,
      loadavg: [load0, load1()],
    };
    log(
      `cpu-hour: agent ${r.agentCpuSPerHour.toFixed(1)} s/h, node_exporter ${r.nodeExporterCpuSPerHour.toFixed(1)} s/h (${r.scans} scans in ${elapsedS.toFixed(0)} s, ${r.heapReleases} heap releases)`,
    );
    return r;
  } finally {
    await Promise.all([stop(agentChild), stop(ne)]);
  }
}

function eldWindow(file: string, from: number, to: number) {
  if (!existsSync(file)) return { maxMs: Number.NaN, intervals: 0, over5ms: 0 };
  const rows = readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { t: number; maxMs: number })
    .filter((r) => r.t >= from && r.t <= to);
  return {
    maxMs: rows.reduce((m, r) => Math.max(m, r.maxMs), 0),
    intervals: rows.length,
    over5ms: rows.filter((r) => r.maxMs > 5).length,
  };
}

async function staticBaseline(seconds: number, metrics: string, report: string) {
  const port = 9979;
  writeFileSync("/tmp/pxbench-static-metrics", metrics);
  writeFileSync("/tmp/pxbench-static-report", report);
  // The same event-loop monitor as the agent's: on a shared machine the bare server's own longest
  // block is the floor the agent's is read against (bench/results/serve-bytes.md).
  const eld = `/tmp/pxbench-eld-static-${process.pid}.jsonl`;
  rmSync(eld, { force: true });
  const child = spawn(
    process.execPath,
    [
      "--import",
      ELD_PRELOAD,
      STATIC_SERVE,
      String(port),
      "/tmp/pxbench-static-metrics",
      "/tmp/pxbench-static-report",
    ],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, PXBENCH_ELD_OUT: eld },
    },
  );
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (d: Buffer) => d.toString().includes("ready") && resolve());
      child.once("exit", (c) => reject(new Error(`static-serve exited ${c}`)));
    });
    const from = Date.now();
    const paced = await loadPhase(port, seconds, 4, 200);
    return { ...paced, eventLoop: eldWindow(eld, from, Date.now()) };
  } finally {
    await stop(child);
    rmSync("/tmp/pxbench-static-metrics", { force: true });
    rmSync("/tmp/pxbench-static-report", { force: true });
    rmSync(eld, { force: true });
  }
}

/**
 * Rows (d) and (e): the agent serving from its last scan while scans run back to back: paced and
 * saturated clients for `seconds`, the serving thread's event-loop delay, then RSS after each of
 * `rssScans` further scans; and the same paced clients against a bare server of the same bytes.
 */
async function serveUnderLoad(seconds: number, concurrency: number, metricsOut: string, rssScans: number) {
  const port = 9977;
  const eld = `/tmp/pxbench-eld-${process.pid}.jsonl`;
  rmSync(eld, { force: true });
  const child = spawnAgentServe(
    AGENT_CLI,
    port,
    [
      "--scan-interval-ms",
      "500",
      "--kube-proxy-metrics-url",
      "http://127.0.0.1:1",
      "--kube-proxy-health-url",
      "http://127.0.0.1:1",
    ],
    eld,
  );
  try {
    await waitFor(port, "/readyz", 900_000);
    const scans0 = scansTotal((await get(port, "/metrics")).body);
    let rssMax = 0;
    const sampler = setInterval(() => (rssMax = Math.max(rssMax, procStatus(child.pid!, "VmRSS") || 0)), 100);
    const from = Date.now();
    const load0 = load1();
    // Paced: 200 requests per second from 4 clients, well under saturation: the latency a scraper sees.
    const paced = await loadPhase(port, seconds / 2, 4, 200);
    const pacedTo = Date.now();
    // Closed loop: C clients back to back, the most the agent serves (requests per second).
    const saturated = await loadPhase(port, seconds / 2, concurrency, 0);
    // The block is judged under the paced clients, as the p99 is (and as the bare server is measured);
    // under saturation every loop turn is busy by design, so that window is only shown.
    const eventLoop = eldWindow(eld, from, pacedTo);
    const eventLoopSaturated = eldWindow(eld, pacedTo, Date.now());
    clearInterval(sampler);
    const after = await get(port, "/metrics");
    const report = await get(port, "/report");
    writeFileSync(metricsOut, after.body);
    const scans1 = scansTotal(after.body);
    const lastScanS = Number(/^proxyscope_last_scan_duration_seconds (\S+)/m.exec(after.body)?.[1] ?? "NaN");
    const out: Record<string, unknown> = {
      paced,
      saturated,
      eventLoop,
      eventLoopSaturated,
      loadavg: [load0, load1()],
      scansDuringLoad: scans1 - scans0,
      lastScanS,
      metricsSeries: seriesCount(after.body),
      metricsSeriesProxyscope: after.body.split("\n").filter((l) => l.startsWith("proxyscope_")).length,
      agentMaxRssMb: Math.max(rssMax, procStatus(child.pid!, "VmHWM")),
    };
    if (rssScans > 0) {
      // RSS after each scan, read when the scan counter moves; a deadline well past the slowest scan.
      const rss: { scans: number[]; rssMb: number[] } = { scans: [], rssMb: [] };
      let seen = scans1;
      const deadline = Date.now() + rssScans * (Math.max(lastScanS, 1) * 4 + 5) * 1000;
      while (rss.scans.length < rssScans && Date.now() < deadline) {
        await sleep(100);
        const n = scansTotal((await get(port, "/metrics")).body);
        if (n > seen) {
          seen = n;
          rss.scans.push(n);
          rss.rssMb.push(procStatus(child.pid!, "VmRSS"));
          if (rss.scans.length % 50 === 0)
            log(`rss: ${rss.scans.length}/${rssScans} scans, ${rss.rssMb.at(-1)!.toFixed(0)} MB`);
        }
      }
      out.rss = rss;
    }
    out.baseline = await staticBaseline(seconds / 2, after.body, report.body);
    return out;
  } finally {
    await stop(child);
    rmSync(eld, { force: true });
  }
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    options: {
      out: { type: "string" },
      label: { type: "string" },
      reps: { type: "string", default: "5" },
      floor: { type: "string", default: "nft" },
      baseline: { type: "string", multiple: true, default: [] },
      "baseline-reps": { type: "string" },
      "cpu-hour-s": { type: "string", default: "0" },
      "load-s": { type: "string", default: "10" },
      concurrency: { type: "string", default: "8" },
      "rss-scans": { type: "string", default: "0" },
      profile: { type: "string" },
      // nftables mode in a namespace: kube-proxy's /metrics from the stand-in, so the scan cache has
      // kube-proxy's counters to go by (a node without them reads everything every scan).
      "kube-proxy-standin": { type: "boolean", default: false },
    },
  });
  const out = required(values.out, "--out");
  const reps = count(values.reps, "--reps");
  if (values.floor !== "ipvs" && values.floor !== "nft")
    usageError(`--floor is ipvs or nft, not '${values.floor}'`);
  const breps =
    values["baseline-reps"] === undefined ? reps : count(values["baseline-reps"], "--baseline-reps");
  const cpuHourS = seconds(values["cpu-hour-s"], "--cpu-hour-s");
  const loadS = seconds(values["load-s"], "--load-s");
  const concurrency = count(values.concurrency, "--concurrency");
  const rssScans = count(values["rss-scans"], "--rss-scans");
  const result: Record<string, unknown> = { label: values.label, reps, loadavgStart: load1() };
  const save = () => writeFileSync(out, JSON.stringify(result, null, 1));

  log(`${values.label}: ${reps} scans`);
  const scans: ScanSample[] = [];
  for (let i = 0; i < reps; i++) {
    scans.push(scanOnce(i === 0 ? ["--save-report", `${out}.report.json`] : []));
    log(`scan ${i + 1}/${reps}: ${scans[i]!.wallMs.toFixed(0)} ms, ${scans[i]!.maxRssMb.toFixed(0)} MB`);
  }
  result.scans = scans.map(({ calls: _c, ...s }) => s);
  result.calls = scans[0]?.calls ?? [];
  save();

  const reads = values.floor === "ipvs" ? ipvsFloor() : nftFloor();
  result.floorReads = reads;
  result.floor = Array.from({ length: reps }, () => floorOnce(reads));
  if (reps > 0)
    log(`floor: ${(result.floor as { wallMs: number }[]).map((f) => f.wallMs.toFixed(0)).join(" ")} ms`);
  if (values.floor === "ipvs") result.reference = Array.from({ length: reps }, () => timed(IPVS_REFERENCE));
  // Node's own start, same machine and moment: in UML it is seconds of CPU no agent code can remove,
  // so the ipvs row also reads the scan with it taken out (bench/lib/targets.ts).
  const empty = `${out}.empty.mjs`;
  writeFileSync(empty, "");
  result.nodeStart = Array.from({ length: reps }, () => timed([process.execPath, empty]));
  save();

  if (values.profile) {
    // One extra scan under the CPU profiler, for a target that is missed.
    scanOnce([], ["--cpu-prof", `--cpu-prof-dir=${values.profile}`]);
    result.profileDir = values.profile;
  }

  const baselines: Record<string, ReturnType<typeof timed>[]> = {};
  for (const b of values.baseline ?? []) {
    const argv = b.split(" ");
    baselines[b] = [];
    for (let i = 0; i < breps; i++) {
      baselines[b].push(timed(argv));
      log(`baseline ${b}: ${baselines[b].at(-1)!.wallMs.toFixed(0)} ms`);
    }
  }
  result.baselines = baselines;
  save();

  if (cpuHourS > 0) {
    log(`serve with default settings for ${cpuHourS} s, node_exporter beside it`);
    const kp = values["kube-proxy-standin"] ? await kubeProxyStandin(`${DIST}/..`) : null;
    try {
      result.cpuHour = await cpuHour(cpuHourS, kp ? ["--kube-proxy-metrics-url", kp.url] : []);
      result.kubeProxy = kp ? "stand-in (test/standins/kube-proxy.ts)" : "none";
    } catch (e) {
      // Row (a) not measured, and why; the rows after it still run.
      result.cpuHourError = (e as Error).message;
      log(`cpu-hour not measured: ${result.cpuHourError}`);
    } finally {
      kp?.stop();
    }
    save();
  }

  if (loadS > 0) {
    log(`serve under load for ${loadS} s`);
    result.serve = await serveUnderLoad(loadS, concurrency, `${out}.metrics.txt`, rssScans);
    save();
  }
  result.loadavgEnd = load1();
  save();
  agent.destroy();
}

main().catch((e: unknown) => {
  process.stderr.write(`node-bench: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
