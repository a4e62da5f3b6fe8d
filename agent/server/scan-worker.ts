// The scan's own thread (worker_threads): probes, parsing, rules, the report and every body served
// from it (JSON, summary, parity, node metrics) are made here, so the serving event loop only receives
// finished bytes. One worker serves every scan (module caches such as the package database's stay
// warm); the main thread starts a new one after a crash (scan-thread.ts).
import { parentPort, workerData } from "node:worker_threads";
import { mirrorLiveGroups, ToolRunner } from "../io/run.js";
import { SharedGroups } from "../io/shared-groups.js";
import { NodeMetrics } from "../metrics/node-metrics.js";
import type { NodeReport } from "../report/schema.js";
import { newScanCache, scanNode } from "../scan.js";
import { verifyReport } from "../verify/run.js";
import { exposedGc, HEAP_RELEASE_GROWTH_BYTES, HeapRelease } from "./heap-release.js";
import { renderScan, transferList } from "./rendered-scan.js";
import type { FromWorker, ScanWorkerData, ToWorker } from "./scan-thread.js";

const data = workerData as ScanWorkerData;
if (data.groups) mirrorLiveGroups(new SharedGroups(data.groups));
const tools = new ToolRunner(data.toolDirs, undefined, data.kubeProxyNftDir);
// The deep reads kept between scans live as long as this thread; a new thread starts with none.
const interval = data.fullReadIntervalS ?? 0;
const connInterval = data.ipvsConnIntervalS ?? 0;
const cache = interval > 0 || connInterval > 0 ? newScanCache(interval * 1000, connInterval * 1000) : null;
// Tests name a module of their own probes; the agent always runs the registry's.
type Probes = Parameters<typeof scanNode>[1];
const probes: Probes = data.probesModule
  ? ((await import(data.probesModule)) as { PROBES: Probes }).PROBES
  : undefined;
const port = parentPort!;
const metrics = new NodeMetrics();
// The last report this thread made (or, after a crash, the one the last thread made): the next scan's
// previous, and what /verify checks. It never leaves this thread as an object.
let previous: NodeReport | null = data.previousReport
  ? (JSON.parse(new TextDecoder().decode(data.previousReport)) as NodeReport)
  : null;
const message = (e: unknown) => (e as Error)?.message ?? String(e);
// After the answer is posted, so the reducing GC never delays a report.
const heap = new HeapRelease({ growthBytes: HEAP_RELEASE_GROWTH_BYTES, gc: exposedGc() });
function releaseHeap(): void {
  const freedBytes = heap.afterScan();
  // How often it runs is the SRE's to see (a counter on /metrics), not only the benchmark's.
  if (freedBytes !== null) port.postMessage({ type: "heap-released", freedBytes } satisfies FromWorker);
}

async function scan(id: number): Promise<void> {
  const report = await scanNode({ ...data.input, tools, cache, previous }, probes);
  const rendered = await renderScan(report, previous, metrics);
  previous = report;
  port.postMessage({ type: "report", id, scan: rendered } satisfies FromWorker, transferList(rendered));
  releaseHeap();
}

async function verify(id: number): Promise<void> {
  if (previous === null) throw new Error("no report in the scan thread yet");
  if (data.verify === undefined) throw new Error("this scan thread was started without verify options");
  const result = await verifyReport(previous, { ...data.input, tools }, data.verify);
  port.postMessage({ type: "verified", id, result } satisfies FromWorker);
  releaseHeap();
}

port.on("message", (m: ToWorker) => {
  if (m.type === "close") {
    // Every tool call still running ends with its process group; then the thread.
    tools.close();
    process.exit(0);
  }
  if (m.type === "verify") {
    void verify(m.id).catch((e: unknown) =>
      port.postMessage({ type: "verify-failed", id: m.id, message: message(e) } satisfies FromWorker),
    );
    return;
  }
  void scan(m.id).catch((e: unknown) =>
    port.postMessage({ type: "error", id: m.id, message: message(e) } satisfies FromWorker),
  );
});
port.postMessage({ type: "ready" } satisfies FromWorker);
