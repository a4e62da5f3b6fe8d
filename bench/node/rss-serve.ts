// Memory, taken apart: `serve` scanning back to back in a namespace that already holds
// kube-proxy's nftables state (bench/nft-calls.ts --keep builds one), its RSS read after each scan
// (as node-bench.ts does), plus each thread's own V8 heap from bench/node/mem-preload.ts, so the
// figure says whether the memory is the serving thread's, the scan worker's or outside both (malloc).
// How to run it: USAGE, which --help prints.
import { spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { fileURLToPath } from "node:url";
import { benchArgs, count, seconds, usageError } from "../lib/args.js";
import { rssFigures } from "../lib/targets.js";
import { kubeProxyStandin } from "../lib/kube-proxy-standin.js";

const USAGE = `\
Usage: ip netns exec NS node dist/bench/node/rss-serve.js [--scans 100] [--out FILE] [--interval-s 0.5]
         [--max-s S] [--standin] [--env MALLOC_ARENA_MAX=2]... [--node-arg=--max-semi-space-size=1]...
         [--agent-cli OTHER/dist/agent/cli.js] [--agent-arg=--call-timeout-ms=120000]...
         [--label serve] [--port 9979]
\`serve\` scanning back to back in a namespace holding kube-proxy's nftables state; RSS after each
scan and each thread's V8 heap. The figures go to stderr; with --out, every sample to FILE (JSON).
  --max-s S     stop after S seconds even short of --scans (0: no limit)
  --standin     the kube-proxy stand-in answers /metrics, so the chain listing is kept between scans
                (the cache holds it); without it the agent reads everything every scan, as
                node-bench.ts's row (e) does
  --env, --node-arg, --agent-arg   the agent's environment, node flags and \`serve\` flags; a value
                starting with - is given with =
At 10,000 Services on a loaded machine \`nft -j list chains\` outlasts the default 10 s call timeout:
give a longer one (--agent-arg=--call-timeout-ms=120000), or the scan measured is one whose nftables
probe failed (and parsed nothing).`;

const DIST = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const REPO = fileURLToPath(new URL("../../../", import.meta.url)).replace(/\/$/, "");
const PRELOAD = `${DIST}/bench/node/mem-preload.js`;
const log = (m: string) => process.stderr.write(`[rss-serve] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

function status(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const m of readFileSync(`/proc/${pid}/status`, "utf8").matchAll(/^(\w+):\s+(\d+) kB/gm))
      out[m[1]!] = Number(m[2]) / 1024;
  } catch {
    // gone
  }
  return out;
}

function get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve(res.statusCode === 200 ? Buffer.concat(chunks).toString("utf8") : ""));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on("error", reject);
    req.end();
  });
}

/** CPU of a process, ms: user + sys, its reaped children's (the tools the agent ran) included. */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number);
    return ((f[11]! + f[12]!) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

const metric = (body: string, name: string) =>
  Number(new RegExp(`^${name} (\\S+)`, "m").exec(body)?.[1] ?? "NaN");

interface MemLine {
  t: number;
  thread: string;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  mallocedMb: number;
  peakMallocedMb: number;
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    options: {
      scans: { type: "string", default: "100" },
      "interval-s": { type: "string", default: "0.5" },
      standin: { type: "boolean", default: false },
      env: { type: "string", multiple: true, default: [] },
      "node-arg": { type: "string", multiple: true, default: [] },
      "agent-arg": { type: "string", multiple: true, default: [] },
      "max-s": { type: "string", default: "0" },
      "agent-cli": { type: "string", default: `${DIST}/agent/cli.js` },
      label: { type: "string", default: "serve" },
      port: { type: "string", default: "9979" },
      out: { type: "string" },
    },
  });
  const scans = count(values.scans, "--scans");
  const port = count(values.port, "--port", 1);
  const intervalS = seconds(values["interval-s"], "--interval-s");
  const maxS = seconds(values["max-s"], "--max-s");
  for (const kv of values.env) if (!/^\w+=/.test(kv)) usageError(`--env wants NAME=VALUE, not '${kv}'`);
  const memOut = `/var/tmp/pxrss-mem-${process.pid}.jsonl`;
  rmSync(memOut, { force: true });
  const kp = values.standin ? await kubeProxyStandin(REPO) : null;
  const env: Record<string, string> = { ...process.env, PXBENCH_MEM_OUT: memOut } as Record<string, string>;
  for (const kv of values.env ?? []) env[kv.slice(0, kv.indexOf("="))] = kv.slice(kv.indexOf("=") + 1);
  const kpUrl = kp?.url ?? "http://127.0.0.1:1";
  const child = spawn(
    process.execPath,
    [
      ...(values["node-arg"] ?? []),
      "--import",
      PRELOAD,
      values["agent-cli"]!,
      "serve",
      ...["--listen", "127.0.0.1", "--port", String(port), "--log-level", "error", "--node", "bench-node"],
      ...["--scan-interval-ms", String(Math.round(intervalS * 1000))],
      ...["--kube-proxy-metrics-url", kpUrl, "--kube-proxy-health-url", kpUrl],
      ...(values["agent-arg"] ?? []),
    ],
    { stdio: ["ignore", "ignore", "inherit"], env },
  );
  const result: Record<string, unknown> = {
    label: values.label,
    agentCli: values["agent-cli"],
    env: values.env,
    nodeArgs: values["node-arg"],
    agentArgs: values["agent-arg"],
    standin: values.standin,
    intervalS,
    loadavgStart: loadavg(),
  };
  const per: {
    scan: number;
    t: number;
    rss: number;
    rssAnon: number;
    rssFile: number;
    lastScanS: number;
    cpuMs: number;
  }[] = [];
  try {
    let seen = Number.NaN;
    const t0 = Date.now();
    // --max-s: stop at this many seconds even short of --scans (the figures say how many ran).
    const until = maxS > 0 ? t0 + maxS * 1000 : Infinity;
    while (per.length < scans && Date.now() < until) {
      if (child.exitCode !== null) throw new Error(`agent exited ${child.exitCode}`);
      await sleep(100);
      let body: string;
      try {
        body = await get(port, "/metrics");
      } catch {
        continue; // not listening yet
      }
      const n = metric(body, "proxyscope_scans_total");
      // Scan 0 is the agent before its first scan ends: not a scan's RSS.
      if (!Number.isFinite(n) || n === seen || n === 0) continue;
      seen = n;
      const s = status(child.pid!);
      per.push({
        scan: n,
        t: Date.now(),
        rss: s.VmRSS!,
        rssAnon: s.RssAnon!,
        rssFile: s.RssFile!,
        lastScanS: metric(body, "proxyscope_last_scan_duration_seconds"),
        cpuMs: cpuMs(child.pid!),
      });
      if (per.length % 50 === 0 || per.length === 1)
        log(
          `${per.length}/${scans} scans, RSS ${s.VmRSS!.toFixed(0)} MB (${((Date.now() - t0) / 1000).toFixed(0)} s)`,
        );
    }
    result.vmHwmMb = status(child.pid!).VmHWM;
    const last = await get(port, "/metrics");
    result.scanFailures = metric(last, "proxyscope_scan_failures_total");
    result.heapReleases = metric(last, "proxyscope_scan_heap_releases_total");
    result.heapReleasedMb = metric(last, "proxyscope_scan_heap_released_bytes_total") / 1048576;
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    kp?.stop();
  }
  // Each scan's last heap sample of each thread before its RSS was read.
  const mem = readFileSync(memOut, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as MemLine);
  rmSync(memOut, { force: true });
  const threads = [...new Set(mem.map((m) => m.thread))];
  const at = (thread: string, t: number) => mem.filter((m) => m.thread === thread && m.t <= t).at(-1) ?? null;
  const samples = per.map((p) => ({
    ...p,
    threads: Object.fromEntries(threads.map((th) => [th, at(th, p.t)])),
  }));
  const peak = (thread: string, k: keyof MemLine) =>
    Math.max(...mem.filter((m) => m.thread === thread).map((m) => Number(m[k])));
  result.loadavgEnd = loadavg();
  // The agent's own CPU (tools excluded) per scan, from the first scan's end to the last's.
  const first = per[0];
  const lastP = per.at(-1);
  result.agentCpuMsPerScan =
    first && lastP && lastP.scan > first.scan
      ? (lastP.cpuMs - first.cpuMs) / (lastP.scan - first.scan)
      : Number.NaN;
  // RSS over time (every sample of the serving thread), to see whether it falls back between scans.
  result.timeline = mem.filter((m) => m.thread === "main").map((m) => [m.t, m.rss]);
  result.figures = rssFigures(per.map((p) => p.rss));
  result.anonFigures = rssFigures(per.map((p) => p.rssAnon));
  result.threadPeaks = Object.fromEntries(
    threads.map((th) => [
      th,
      {
        heapUsed: peak(th, "heapUsed"),
        heapTotal: peak(th, "heapTotal"),
        arrayBuffers: peak(th, "arrayBuffers"),
        external: peak(th, "external"),
      },
    ]),
  );
  const last = samples.at(-1);
  result.lastThreads = last?.threads;
  result.samples = samples;
  const f = result.figures as ReturnType<typeof rssFigures>;
  log(
    `${values.label}: ${f.scans} scans, steady ${f.steady.toFixed(1)} MB, max ${f.max.toFixed(1)}, ${f.per1000.toFixed(1)} MB/1000 scans, HWM ${Number(result.vmHwmMb).toFixed(0)} MB, agent CPU ${Number(result.agentCpuMsPerScan).toFixed(0)} ms/scan, load ${String(result.loadavgStart)} -> ${String(result.loadavgEnd)}`,
  );
  for (const th of threads) {
    const m = last?.threads[th];
    if (m)
      log(
        `  ${th}: heapUsed ${m.heapUsed} / heapTotal ${m.heapTotal}, external ${m.external}, arrayBuffers ${m.arrayBuffers}, malloced ${m.mallocedMb}; peaks ${JSON.stringify((result.threadPeaks as Record<string, unknown>)[th])}`,
      );
  }
  if (values.out) writeFileSync(values.out, JSON.stringify(result, null, 1));
}

main().catch((e: unknown) => {
  process.stderr.write(`rss-serve: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
