// What the serving thread spends on one scan's result, measured on that thread alone
// (process.threadCpuUsage), beside an older build's path for the same report:
//   old  the worker posts the NodeReport object (structured clone), the serving thread posts it back
//        as the next scan's previous, then AgentState.record: JSON.stringify twice and every gauge set
//        and rendered (the older build's own AgentState and AgentMetrics, imported from --old-dist);
//   new  the worker posts finished bodies (strings, or transferred ArrayBuffers) and a small object;
//        the serving thread keeps views of them and joins its own metrics.
// How to run it: USAGE, which --help prints.
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { AgentMetrics } from "../../agent/metrics/agent-metrics.js";
import type { NodeReport } from "../../agent/report/schema.js";
import { renderScan, transferList, type RenderedScan } from "../../agent/server/rendered-scan.js";
import { AgentState } from "../../agent/server/state.js";
import { benchArgs, count, required } from "../lib/args.js";

const USAGE = `\
Usage: node dist/bench/node/serve-cost.js --report FILE [--old-dist DIR] [--reps 40] [--out FILE]
The serving thread's CPU per scan result, for the same report posted as finished buffers and as
strings, and (with --old-dist) the older build's path: the object cloned, then its AgentState.
Results on stderr, and to --out FILE (JSON).
  --report FILE   a node report (JSON), e.g. from scan-once.js --save-report (required)
  --old-dist DIR  an older build's dist/, whose AgentState and AgentMetrics are measured beside
  --reps N        results received per path, after 3 unmeasured`;

type Mode = "object" | "strings" | "buffers";
const cpuMs = () => {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1000;
};

if (!isMainThread) {
  // The scan thread's side: the same report every time, posted the way `mode` says.
  const { file, mode } = workerData as { file: string; mode: Mode };
  const report = JSON.parse(readFileSync(file, "utf8")) as NodeReport;
  parentPort!.on("message", async () => {
    if (mode === "object") return parentPort!.postMessage(report);
    const r = await renderScan(report);
    if (mode === "buffers") return parentPort!.postMessage(r, transferList(r));
    const dec = new TextDecoder();
    parentPort!.postMessage({
      ...r,
      report: dec.decode(r.report),
      summary: dec.decode(r.summary),
      metrics: dec.decode(r.metrics),
    });
  });
} else {
  const { values } = benchArgs(USAGE, {
    options: {
      report: { type: "string" },
      "old-dist": { type: "string" },
      reps: { type: "string", default: "40" },
      out: { type: "string" },
    },
  });
  const reps = count(values.reps, "--reps", 1);
  const file = required(values.report, "--report");
  const self = new URL(import.meta.url);

  /** Mean serving-thread CPU ms per message received (the thread does nothing else meanwhile). */
  async function receive(mode: Mode, onMessage: (m: unknown) => unknown) {
    const w = new Worker(self, { workerData: { file, mode } });
    const next = () => new Promise<unknown>((r) => w.once("message", r));
    for (let i = 0; i < 3; i++) {
      w.postMessage(null);
      await onMessage(await next());
    }
    let total = 0;
    for (let i = 0; i < reps; i++) {
      w.postMessage(null);
      const got = next();
      // Measured from the moment the worker has been asked, so the clone's deserialisation counts.
      const c0 = cpuMs();
      await onMessage(await got);
      total += cpuMs() - c0;
    }
    await w.terminate();
    return total / reps;
  }

  const results: Record<string, unknown> = { report: file, reps, loadavg: loadavg()[0] };
  const newState = new AgentState(new AgentMetrics({ version: "bench", processMetrics: true }));
  results.newBuffers = await receive("buffers", async (m) => {
    newState.record(m as RenderedScan);
    await newState.metrics.expositionBytes();
  });
  results.newStrings = await receive("strings", async (m) => {
    const r = m as RenderedScan & { report: string; summary: string; metrics: string };
    // Strings are encoded once here so that a request sends bytes, as with buffers.
    const enc = new TextEncoder();
    newState.record({
      ...r,
      report: enc.encode(r.report),
      summary: enc.encode(r.summary),
      metrics: enc.encode(r.metrics),
    });
    await newState.metrics.expositionBytes();
  });
  if (values["old-dist"]) {
    const dist = values["old-dist"];
    const { AgentState: OldState } = (await import(`${dist}/agent/server/state.js`)) as {
      AgentState: new (m: unknown) => { record(r: unknown): void; current: { report: unknown } | null };
    };
    const { AgentMetrics: OldMetrics } = (await import(`${dist}/agent/metrics/agent-metrics.js`)) as {
      AgentMetrics: new (o: unknown) => { exposition(): Promise<string> };
    };
    const { risingCounters } = (await import(`${dist}/agent/server/rising.js`)) as {
      risingCounters: (a: unknown, b: unknown) => unknown;
    };
    const metrics = new OldMetrics({ version: "bench", processMetrics: true });
    const oldState = new OldState(metrics);
    // The previous report posted back into the worker for the next scan: serialised on this thread.
    const echo = new Worker("require('node:worker_threads').parentPort.on('message', () => {})", {
      eval: true,
    });
    results.old = await receive("object", async (m) => {
      const before = oldState.current?.report ?? null;
      echo.postMessage({ type: "scan", id: 1, previous: before });
      oldState.record(m);
      risingCounters(before, m);
      await metrics.exposition();
    });
    await echo.terminate();
  }
  process.stderr.write(`[serve-cost] ${JSON.stringify(results)}\n`);
  if (values.out) writeFileSync(values.out, JSON.stringify(results, null, 1));
}
