// The replay's `serve` rows, all from one window in the replay's network namespace: the built agent's
// `serve` at its defaults on the 10,000-Service record, the kube-proxy STAND-IN answering ipvs mode with
// nothing pending (so the ipvs-mode gate can reuse the deep reads between kube-proxy's changes, as on a
// real node), and node_exporter beside it with its default collectors, its ipvs collector reading the
// same recorded /proc/net/ip_vs (a second one without the ipvs collector, for what the rest costs).
// All are scraped every 30 s, as Prometheus would. Then /metrics under
// paced clients against a bare node:http server serving the same bytes, one after the other.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { request } from "node:http";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { spawnAgentServe, scansTotal } from "../lib/agent-serve.js";
import { kubeProxyStandin } from "../lib/kube-proxy-standin.js";
import { percentiles } from "../lib/stats.js";

const DIST = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const REPO = `${DIST}/..`;
const CLI = `${DIST}/agent/cli.js`;
const STATIC_SERVE = `${DIST}/bench/node/static-serve.js`;
const ELD_PRELOAD = `${DIST}/bench/node/eld-preload.js`;
export const NODE_EXPORTER = "/usr/bin/prometheus-node-exporter";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// The /metrics phase with scans landing: a few in a minute's load, not the one a 60 s interval may or
// may not put there.
const SCANNING_INTERVAL_S = 20;
const log = (m: string) => process.stderr.write(`[replay] ${m}\n`);

export function get(port: number, path: string, timeoutMs = 120_000) {
  return new Promise<{ status: number; body: string; ms: number }>((resolve, reject) => {
    const t0 = performance.now();
    const req = request({ host: "127.0.0.1", port, path, timeout: timeoutMs }, (res) => {
      const c: Buffer[] = [];
      res.on("data", (d: Buffer) => c.push(d));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(c).toString("utf8"),
          ms: performance.now() - t0,
        }),
      );
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
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

/** A process's CPU ms: its own (every thread), and its reaped children's (the tools it ran). */
function cpuOf(pid: number): { selfMs: number; childMs: number } {
  const s = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = s
    .slice(s.lastIndexOf(")") + 2)
    .split(" ")
    .map(Number);
  return { selfMs: (f[11]! + f[12]!) * 10, childMs: (f[13]! + f[14]!) * 10 };
}

/** The kB fields of /proc/PID/status, in MB. */
function memOf(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of readFileSync(`/proc/${pid}/status`, "utf8").matchAll(/^(\w+):\s+(\d+) kB/gm))
    out[m[1]!] = Number(m[2]) / 1024;
  return out;
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), 5000).unref();
  });
}

/**
 * A /proc for node_exporter (--path.procfs): the host's entries, each a symlink, except net/ip_vs and
 * net/ip_vs_stats, which are the record's. Its ipvs collector then parses the same 10,000-Service
 * table the agent does, and every other collector reads this namespace's kernel as usual.
 */
function procfsWithRecordedIpvs(dir: string): string {
  const view = mkdtempSync("/tmp/pxbench-ne-proc-");
  for (const e of readdirSync("/proc"))
    if (!/^\d+$/.test(e) && e !== "net") symlinkSync(`/proc/${e}`, `${view}/${e}`);
  mkdirSync(`${view}/net`);
  const recorded = ["ip_vs", "ip_vs_stats"];
  for (const e of readdirSync("/proc/self/net"))
    if (!recorded.includes(e)) symlinkSync(`/proc/self/net/${e}`, `${view}/net/${e}`);
  for (const e of recorded)
    if (existsSync(`${dir}/proc/net/${e}`)) symlinkSync(`${dir}/proc/net/${e}`, `${view}/net/${e}`);
  return view;
}

/** `workers` clients GETting /metrics, paced to `rps` in all, for `seconds`: each answer's time. */
async function pacedMetrics(port: number, seconds: number, workers: number, rps: number) {
  const lat: number[] = [];
  let errors = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const gapMs = (1000 * workers) / rps;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      let next = t0 + (gapMs * w) / workers;
      while (performance.now() < end) {
        const wait = next - performance.now();
        if (wait > 0) await sleep(wait);
        next += gapMs;
        try {
          const r = await get(port, "/metrics", 30_000);
          if (r.status === 200) lat.push(r.ms);
          else errors++;
        } catch {
          errors++;
        }
      }
    }),
  );
  return { requests: lat.length, errors, ...percentiles(lat) };
}

/** The serving thread's event-loop delay over 250 ms intervals: the longest block, the worst and median p99. */
function eldSummary(rows: { maxMs: number; p99Ms: number }[]) {
  const p99s = rows.map((r) => r.p99Ms).sort((a, b) => a - b);
  return {
    maxMs: rows.reduce((m, r) => Math.max(m, r.maxMs), 0),
    worstP99Ms: p99s.at(-1) ?? NaN,
    medianP99Ms: p99s[Math.floor(p99s.length / 2)] ?? NaN,
    intervals: rows.length,
    over5ms: rows.filter((r) => r.maxMs > 5).length,
  };
}

function eldRows(file: string, from: number, to: number) {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { t: number; maxMs: number; p99Ms: number })
    .filter((r) => r.t >= from && r.t <= to);
}

interface MemLine {
  t: number;
  thread: string;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  mallocedMb: number;
}

/** Each thread's last heap sample at or before `t` (mem-preload.ts), by thread ("main", "worker-N"). */
function heapsAt(file: string, t: number): Record<string, MemLine> {
  const out: Record<string, MemLine> = {};
  if (!existsSync(file)) return out;
  for (const l of readFileSync(file, "utf8").split("\n")) {
    if (l === "") continue;
    const m = JSON.parse(l) as MemLine;
    if (m.t <= t) out[m.thread.startsWith("worker") ? "worker" : m.thread] = m;
  }
  return out;
}

export interface ServeOptions {
  dir: string;
  windowS: number;
  /** Seconds of paced /metrics clients, against the agent and then the bare server. */
  loadS: number;
  /** One pass of the ipvs floor's reads, replayed (CPU ms): what a scan reading everything needs. */
  floorCpuMs: number;
}

export async function serveRow(o: ServeOptions) {
  const port = 9983;
  const nePort = 9100;
  const neBarePort = 9101;
  const eld = `/tmp/pxbench-replay-eld-${process.pid}.jsonl`;
  const mem = `/tmp/pxbench-replay-mem-${process.pid}.jsonl`;
  rmSync(eld, { force: true });
  rmSync(mem, { force: true });
  if (!existsSync(NODE_EXPORTER))
    throw new Error(`${NODE_EXPORTER} not found (Debian package prometheus-node-exporter)`);
  // Steady ipvs mode: the periodic resync keeps moving the last sync, nothing was queued for 10 min.
  const kp = await kubeProxyStandin(REPO, {
    mode: "ipvs",
    lastSync: { agoSeconds: 3 },
    lastQueued: { unix: Math.floor(Date.now() / 1000) - 600 },
  });
  const procView = procfsWithRecordedIpvs(o.dir);
  const startAgent = (eldOut?: string, memOut?: string, extra: readonly string[] = []) =>
    spawnAgentServe(
      CLI,
      port,
      [
        ...extra,
        "--proc-root",
        `${o.dir}/proc`,
        "--sys-root",
        `${o.dir}/sys`,
        "--tool-dir",
        `${o.dir}/tools`,
        "--kube-proxy-metrics-url",
        kp.url,
        "--kube-proxy-health-url",
        kp.healthUrl,
      ],
      eldOut,
      memOut,
    );
  // The CPU and memory window: no event-loop monitor (its 1 ms timer is CPU the agent does not spend);
  // the heap sampler every 2 s is.
  const t00 = Date.now();
  let agent = startAgent(undefined, mem);
  const ne = spawn(NODE_EXPORTER, [`--path.procfs=${procView}`, `--web.listen-address=127.0.0.1:${nePort}`], {
    stdio: ["ignore", "ignore", "ignore"],
  });
  const neNoIpvs = spawn(
    NODE_EXPORTER,
    ["--no-collector.ipvs", `--web.listen-address=127.0.0.1:${neBarePort}`],
    { stdio: ["ignore", "ignore", "ignore"] },
  );
  for (const c of [ne, neNoIpvs]) c.on("error", (e) => log(`node_exporter: ${e.message}`));
  let bare: ChildProcess | null = null;
  try {
    await waitFor(port, "/readyz", 600_000);
    await waitFor(nePort, "/", 60_000);
    await waitFor(neBarePort, "/", 60_000);
    // Node's start, the scan thread's start and the first scan, which reads everything.
    const toReady = { ...cpuOf(agent.pid!), wallMs: Date.now() - t00 };
    const a0 = cpuOf(agent.pid!);
    const n0 = cpuOf(ne.pid!);
    const b0 = cpuOf(neNoIpvs.pid!);
    const first = (await get(port, "/metrics")).body;
    const s0 = scansTotal(first);
    const t0 = performance.now();
    const rss: number[] = [];
    let neSeries = 0;
    let neIpvsSeries = 0;
    let scrapes = 0;
    let agentBody = first;
    for (let k = 0; ; k++) {
      const due = t0 + k * 2000;
      if (due > t0 + o.windowS * 1000) break;
      await sleep(Math.max(0, due - performance.now()));
      rss.push(memOf(agent.pid!).VmRSS!);
      if (k % 15 === 0) {
        const [a, n] = await Promise.all([
          get(port, "/metrics"),
          get(nePort, "/metrics"),
          get(neBarePort, "/metrics"),
        ]);
        agentBody = a.body;
        const lines = n.body.split("\n").filter((l) => l !== "" && !l.startsWith("#"));
        neSeries = lines.length;
        neIpvsSeries = lines.filter((l) => l.startsWith("node_ipvs_")).length;
        scrapes++;
      }
    }
    const elapsedS = (performance.now() - t0) / 1000;
    const to = Date.now();
    const a1 = cpuOf(agent.pid!);
    const n1 = cpuOf(ne.pid!);
    const b1 = cpuOf(neNoIpvs.pid!);
    const m1 = memOf(agent.pid!);
    const heaps = heapsAt(mem, to);
    const neMem = memOf(ne.pid!);
    const scans = scansTotal((await get(port, "/metrics")).body) - s0;
    const report = (await get(port, "/report")).body;
    const perH = 3600 / elapsedS;
    const sorted = [...rss].sort((a, b) => a - b);
    const window = {
      windowS: elapsedS,
      scans,
      scrapes,
      agentCpuSPerHour: ((a1.selfMs - a0.selfMs) / 1000) * perH,
      replayToolsCpuSPerHour: ((a1.childMs - a0.childMs) / 1000) * perH,
      totalCpuSPerHour: ((a1.selfMs + a1.childMs - a0.selfMs - a0.childMs) / 1000) * perH,
      floorCpuSPerHour: (o.floorCpuMs / 1000) * scans * perH,
      toReady,
      // The window holds no full read (one an hour by default): add one, at what the start cost (Node's
      // start, the scan thread's, and the first scan, which reads everything): an upper bound.
      hourWithFullReadCpuS:
        ((a1.selfMs + a1.childMs - a0.selfMs - a0.childMs) / 1000) * perH +
        (toReady.selfMs + toReady.childMs) / 1000,
      nodeExporter: {
        cpuSPerHour: ((n1.selfMs + n1.childMs - n0.selfMs - n0.childMs) / 1000) * perH,
        series: neSeries,
        ipvsSeries: neIpvsSeries,
        rssMb: neMem.VmRSS ?? Number.NaN,
        withoutIpvsCpuSPerHour: ((b1.selfMs + b1.childMs - b0.selfMs - b0.childMs) / 1000) * perH,
      },
      rssMb: { median: sorted[Math.floor(sorted.length / 2)] ?? NaN, max: sorted.at(-1) ?? NaN },
      hwmMb: m1.VmHWM ?? NaN,
      // Where the resident memory is at the window's end: file pages (the node binary, modules), anonymous
      // (both V8 heaps, malloc), and each isolate's own heap as V8 counts it.
      memory: {
        rss: m1.VmRSS ?? NaN,
        rssAnon: m1.RssAnon ?? NaN,
        rssFile: m1.RssFile ?? NaN,
        rssShmem: m1.RssShmem ?? NaN,
        mainHeapTotal: heaps.main?.heapTotal ?? NaN,
        mainHeapUsed: heaps.main?.heapUsed ?? NaN,
        workerHeapTotal: heaps.worker?.heapTotal ?? NaN,
        workerHeapUsed: heaps.worker?.heapUsed ?? NaN,
        external: (heaps.main?.external ?? NaN) + (heaps.worker?.external ?? NaN),
        malloced: (heaps.main?.mallocedMb ?? NaN) + (heaps.worker?.mallocedMb ?? NaN),
      },
      // How fresh each source of the last report was (reused reads say their age).
      sourceAges: agentBody
        .split("\n")
        .filter((l) => l.startsWith("proxyscope_source_age_seconds{"))
        .slice(0, 20),
    };
    log(
      `serve: agent ${window.agentCpuSPerHour.toFixed(1)} + tools ${window.replayToolsCpuSPerHour.toFixed(1)} CPU-s/h, node_exporter ${window.nodeExporter.cpuSPerHour.toFixed(1)} CPU-s/h, ${scans} scans, RSS ${window.rssMb.median.toFixed(1)} MB`,
    );
    if (o.loadS <= 0) return { window, metricsP99: null };
    await Promise.all([stop(agent), stop(ne), stop(neNoIpvs)]);
    // /metrics under paced clients, the serving thread's event-loop delay monitored, in three phases:
    // the agent with no scan in the phase (its first scan done, the next an hour away: what serving the
    // cached bytes costs), the agent with scans landing (every SCANNING_INTERVAL_S: what a scrape meets
    // while the scan thread works, told apart), then the same bytes from a bare node:http server, the
    // same monitor in it (on a shared machine its own delays are the floor the agent's are read against).
    const underLoad = async (extra: readonly string[]) => {
      agent = startAgent(eld, undefined, extra);
      await waitFor(port, "/readyz", 600_000);
      const from = Date.now();
      const s2 = scansTotal((await get(port, "/metrics")).body);
      const latency = await pacedMetrics(port, o.loadS, 4, 100);
      const eventLoop = eldSummary(eldRows(eld, from, Date.now()));
      const scansUnderLoad = scansTotal((await get(port, "/metrics")).body) - s2;
      await stop(agent);
      rmSync(eld, { force: true });
      return { ...latency, eventLoop, scansUnderLoad };
    };
    const agentLoad = await underLoad(["--scan-interval-s", "3600"]);
    const scanningLoad = await underLoad(["--scan-interval-s", String(SCANNING_INTERVAL_S)]);
    const mf = `/tmp/pxbench-replay-metrics-${process.pid}`;
    const rf = `/tmp/pxbench-replay-report-${process.pid}`;
    writeFileSync(mf, agentBody);
    writeFileSync(rf, report);
    bare = spawn(process.execPath, ["--import", ELD_PRELOAD, STATIC_SERVE, String(port), mf, rf], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, PXBENCH_ELD_OUT: eld },
    });
    await new Promise<void>((resolve, reject) => {
      bare!.stdout!.on("data", (d: Buffer) => d.toString().includes("ready") && resolve());
      bare!.once("exit", (c) => reject(new Error(`static-serve exited ${c}`)));
    });
    const bareFrom = Date.now();
    const bareLoad = await pacedMetrics(port, o.loadS, 4, 100);
    const bareEld = eldSummary(eldRows(eld, bareFrom, Date.now()));
    rmSync(mf, { force: true });
    rmSync(rf, { force: true });
    return {
      window,
      metricsP99: {
        seconds: o.loadS,
        clients: 4,
        rps: 100,
        bytes: Buffer.byteLength(agentBody),
        agent: agentLoad,
        scanning: { ...scanningLoad, intervalS: SCANNING_INTERVAL_S },
        bare: { ...bareLoad, eventLoop: bareEld },
      },
    };
  } finally {
    await Promise.all([stop(agent), stop(ne), stop(neNoIpvs), ...(bare ? [stop(bare)] : [])]);
    kp.stop();
    rmSync(procView, { recursive: true, force: true });
    rmSync(eld, { force: true });
    rmSync(mem, { force: true });
  }
}
