// Row (d), scan by scan: an agent (`serve`, scans back to back) with the event-loop monitor preloaded
// and no clients but a light /metrics poll that tells when each scan lands. Per scan: the longest
// block of the serving thread (monitorEventLoopDelay, 250 ms windows) and that thread's own CPU
// (/proc/PID/task/PID/stat: the main thread alone, not the scan thread, which a busy machine's
// scheduling delay does not inflate). How to run it: USAGE, which --help prints.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { benchArgs, count, required } from "../lib/args.js";
import { spawnAgentServe } from "../lib/agent-serve.js";

const USAGE = `\
Usage: node dist/bench/node/serve-block.js --agent DIST/agent/cli.js [--scans 20] [--out FILE]
         [--label NAME] [--port 9976]
Row (d), scan by scan: the serving thread's longest block and its own CPU per scan, while \`serve\`
scans back to back. A summary on stderr; with --out, every scan's figures to FILE (JSON).
  --agent  the CLI to measure (required), so an older build is measured the same way`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU ms of one thread (user + sys), from its own stat line. */
function threadCpuMs(pid: number, tid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
  const f = stat
    .slice(stat.lastIndexOf(")") + 2)
    .split(" ")
    .map(Number);
  return ((f[11]! + f[12]!) * 1000) / 100;
}

async function get(port: number, path: string): Promise<string | null> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}${path}`);
    return r.ok ? await r.text() : null;
  } catch {
    return null;
  }
}
const scansOf = (m: string | null) => Number(/^proxyscope_scans_total (\S+)/m.exec(m ?? "")?.[1] ?? "0");
// /readyz is the cheapest route that moves with each scan: its report age drops when one lands.
const ageOf = async (port: number) =>
  (JSON.parse((await get(port, "/readyz")) ?? '{"reportAgeSeconds":1e9}') as { reportAgeSeconds: number })
    .reportAgeSeconds;

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    options: {
      agent: { type: "string" },
      scans: { type: "string", default: "20" },
      port: { type: "string", default: "9976" },
      out: { type: "string" },
      label: { type: "string", default: "" },
    },
  });
  const agent = required(values.agent, "--agent");
  const scans = count(values.scans, "--scans");
  const port = count(values.port, "--port", 1);
  const eld = `/tmp/pxbench-block-${process.pid}.jsonl`;
  rmSync(eld, { force: true });
  const child = spawnAgentServe(
    agent,
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
  const pid = child.pid!;
  try {
    let seen = 0;
    for (let i = 0; seen < 2 && i < 3000; i++) {
      seen = scansOf(await get(port, "/metrics"));
      await sleep(100);
    }
    // Scans land here: [ms when seen, main-thread CPU ms then]
    const marks: { t: number; scans: number; cpuMs: number }[] = [];
    const load0 = loadavg()[0]!;
    marks.push({ t: Date.now(), scans: seen, cpuMs: threadCpuMs(pid, pid) });
    const want = seen + scans;
    let lastAge = await ageOf(port);
    let polls = 0;
    // Polled every 500 ms: a poll costs this thread well under a millisecond, a few per scan.
    while (seen < want) {
      await sleep(500);
      const age = await ageOf(port);
      polls++;
      if (age < lastAge) {
        seen++;
        marks.push({ t: Date.now(), scans: seen, cpuMs: threadCpuMs(pid, pid) });
      }
      lastAge = age;
    }
    const rows = existsSync(eld)
      ? readFileSync(eld, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { t: number; maxMs: number })
      : [];
    const perScan = marks.slice(1).map((m, i) => {
      const prev = marks[i]!;
      // The 250 ms window that holds a scan's arrival ends up to 250 ms after the poll saw it.
      const w = rows.filter((r) => r.t > prev.t + 250 && r.t <= m.t + 250);
      return {
        scans: m.scans - prev.scans,
        wallMs: m.t - prev.t,
        maxBlockMs: w.reduce((a, r) => Math.max(a, r.maxMs), 0),
        mainCpuMs: m.cpuMs - prev.cpuMs,
      };
    });
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const blocks = sorted(perScan.map((s) => s.maxBlockMs));
    const cpu = sorted(perScan.map((s) => s.mainCpuMs / s.scans));
    const med = (xs: number[]) => xs[Math.floor(xs.length / 2)] ?? Number.NaN;
    const out = {
      label: values.label,
      agent: values.agent,
      loadavg: [load0, loadavg()[0]],
      intervals: perScan.length,
      polls,
      scanWallMsMedian: med(sorted(perScan.map((s) => s.wallMs))),
      maxBlockMs: { median: med(blocks), max: blocks.at(-1), over5ms: blocks.filter((b) => b > 5).length },
      mainThreadCpuMsPerScan: { median: med(cpu), max: cpu.at(-1) },
      perScan,
    };
    process.stderr.write(
      `[serve-block] ${values.label}: block median ${out.maxBlockMs.median.toFixed(1)} ms, max ${out.maxBlockMs.max?.toFixed(1)} ms; main-thread CPU/scan median ${out.mainThreadCpuMsPerScan.median} ms (load ${load0.toFixed(1)})\n`,
    );
    if (values.out) writeFileSync(values.out, JSON.stringify(out, null, 1));
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    rmSync(eld, { force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`serve-block: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
