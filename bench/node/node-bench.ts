// Everything measured on one node, run inside that node's network namespace (a UML guest or a
// namespace on the host), against the kernel state already built there. Writes one JSON file.
//   node dist/bench/node/node-bench.js --out FILE --label ipvs-1000 --reps 5
//        [--node-exporter] [--baseline 'nft -j list table ip kube-proxy'] [--load-s 10] [--rss-scans 1000]
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync, readSync, writeFileSync } from "node:fs";
import { request, Agent } from "node:http";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { resolveTool } from "../../agent/io/run.js";
import { childrenCpuMs, type ToolCall } from "./scan-once.js";

const DIST = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const SCAN_ONCE = `${DIST}/bench/node/scan-once.js`;
const AGENT_CLI = `${DIST}/agent/cli.js`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (m: string) => process.stderr.write(`[node-bench] ${m}\n`);

export interface ScanSample {
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

/** The raw floor: each file and tool call the scan made, once, output discarded; nothing else. */
function floorOnce(calls: readonly ToolCall[], files: readonly string[]) {
  const devnull = openSync("/dev/null", "w");
  const cpu0 = process.cpuUsage();
  const child0 = childrenCpuMs();
  const t0 = performance.now();
  const buf = Buffer.alloc(256 * 1024);
  let bytes = 0;
  for (const f of files) {
    let fd: number;
    try {
      fd = openSync(f, "r");
    } catch {
      continue;
    }
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0;) bytes += n;
    closeSync(fd);
  }
  for (const c of calls) {
    const path = resolveTool(c.tool);
    if (path === null) continue;
    spawnSync(path, c.args, {
      stdio: ["ignore", devnull, "ignore"],
      env: { LC_ALL: "C", PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
    });
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  closeSync(devnull);
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000 + childrenCpuMs() - child0, fileBytes: bytes };
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

function procCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
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

async function nodeExporter(reps: number) {
  const port = 9100;
  const child = spawn(
    "/usr/bin/prometheus-node-exporter",
    [
      "--collector.disable-defaults",
      "--collector.ipvs",
      "--web.disable-exporter-metrics",
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ["ignore", "ignore", "ignore"] },
  );
  try {
    await waitFor(port, "/", 60_000);
    const scrapes: { wallMs: number; cpuMs: number; bytes: number; series: number }[] = [];
    for (let i = 0; i < reps; i++) {
      const c0 = procCpuMs(child.pid!);
      const r = await get(port, "/metrics");
      scrapes.push({
        wallMs: r.ms,
        cpuMs: procCpuMs(child.pid!) - c0,
        bytes: r.body.length,
        series: seriesCount(r.body),
      });
      log(`node_exporter scrape ${i + 1}/${reps}: ${r.ms.toFixed(0)} ms, ${seriesCount(r.body)} series`);
    }
    return { scrapes, peakRssMb: procStatus(child.pid!, "VmHWM") };
  } finally {
    await stop(child);
  }
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
async function serveUnderLoad(seconds: number, concurrency: number, metricsOut: string) {
  const port = 9977;
  const child = spawn(
    process.execPath,
    [
      AGENT_CLI,
      "serve",
      "--listen",
      "127.0.0.1",
      "--port",
      String(port),
      "--scan-interval-s",
      "0.5",
      "--kube-proxy-metrics-url",
      "http://127.0.0.1:1",
      "--kube-proxy-health-url",
      "http://127.0.0.1:1",
      "--call-timeout-ms",
      "120000",
      "--probe-timeout-ms",
      "180000",
      "--log-level",
      "error",
      "--node",
      "bench-node",
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  try {
    await waitFor(port, "/readyz", 600_000);
    const before = await get(port, "/metrics");
    const scans0 = Number(/^proxyscope_scans_total (\S+)/m.exec(before.body)?.[1] ?? "NaN");
    let rssMax = 0;
    const sampler = setInterval(() => (rssMax = Math.max(rssMax, procStatus(child.pid!, "VmRSS") || 0)), 100);
    // Closed loop: C clients back to back, the most the agent serves (requests per second).
    const saturated = await loadPhase(port, seconds / 2, concurrency, 0);
    // Paced: 200 requests per second from 4 clients, well under saturation: the latency a scraper sees.
    const paced = await loadPhase(port, seconds / 2, 4, 200);
    clearInterval(sampler);
    const after = await get(port, "/metrics");
    writeFileSync(metricsOut, after.body);
    const scans1 = Number(/^proxyscope_scans_total (\S+)/m.exec(after.body)?.[1] ?? "NaN");
    const lastScanS = Number(/^proxyscope_last_scan_duration_seconds (\S+)/m.exec(after.body)?.[1] ?? "NaN");
    return {
      saturated,
      paced,
      scansDuringLoad: scans1 - scans0,
      lastScanS,
      metricsSeries: seriesCount(after.body),
      metricsSeriesProxyscope: after.body.split("\n").filter((l) => l.startsWith("proxyscope_")).length,
      agentMaxRssMb: Math.max(rssMax, procStatus(child.pid!, "VmHWM")),
    };
  } finally {
    await stop(child);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      out: { type: "string" },
      label: { type: "string" },
      reps: { type: "string", default: "5" },
      "node-exporter": { type: "boolean", default: false },
      baseline: { type: "string", multiple: true, default: [] },
      "baseline-reps": { type: "string" },
      "load-s": { type: "string", default: "10" },
      concurrency: { type: "string", default: "8" },
      "rss-scans": { type: "string", default: "0" },
      profile: { type: "string" },
    },
  });
  const reps = Number(values.reps);
  const result: Record<string, unknown> = { label: values.label, reps };
  const save = () => writeFileSync(values.out!, JSON.stringify(result, null, 1));

  log(`${values.label}: ${reps} scans`);
  const scans: ScanSample[] = [];
  for (let i = 0; i < reps; i++) {
    scans.push(scanOnce(i === 0 ? ["--save-report", `${values.out}.report.json`] : []));
    log(`scan ${i + 1}/${reps}: ${scans[i]!.wallMs.toFixed(0)} ms, ${scans[i]!.maxRssMb.toFixed(0)} MB`);
  }
  const calls = scans[0]!.calls;
  result.scans = scans.map(({ calls: _c, ...s }) => s);
  result.calls = calls;
  save();

  const files = ["/proc/net/ip_vs"];
  result.floor = Array.from({ length: reps }, () => floorOnce(calls, files));
  log(`floor: ${(result.floor as { wallMs: number }[]).map((f) => f.wallMs.toFixed(0)).join(" ")} ms`);
  save();

  if (values.profile) {
    // One extra scan under the CPU profiler, for a target that is missed.
    scanOnce([], ["--cpu-prof", `--cpu-prof-dir=${values.profile}`]);
    result.profileDir = values.profile;
  }

  const baselines: Record<string, ReturnType<typeof timed>[]> = {};
  const breps = Number(values["baseline-reps"] ?? reps);
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

  if (values["node-exporter"]) {
    result.nodeExporter = await nodeExporter(Number(values["baseline-reps"] ?? reps));
    save();
  }

  const loadS = Number(values["load-s"]);
  if (loadS > 0) {
    log(`serve under load for ${loadS} s`);
    result.serve = await serveUnderLoad(loadS, Number(values.concurrency), `${values.out}.metrics.txt`);
    save();
  }

  const rssScans = Number(values["rss-scans"]);
  if (rssScans > 0) {
    log(`${rssScans} consecutive scans`);
    result.rss = scanOnce(["--repeat", String(rssScans)]);
    save();
  }
  agent.destroy();
}

main().catch((e: unknown) => {
  process.stderr.write(`node-bench: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
