// The scan's own thread (worker_threads): probes, parsing, rules and report run here, so the serving
// event loop only receives finished reports. One worker serves every scan (module caches such as the
// package database's stay warm); the main thread starts a new one after a crash (scan-thread.ts).
import { parentPort, workerData } from "node:worker_threads";
import { mirrorLiveGroups, ToolRunner } from "../io/run.js";
import { SharedGroups } from "../io/shared-groups.js";
import { newScanCache, scanNode } from "../scan.js";
import type { FromWorker, ScanWorkerData, ToWorker } from "./scan-thread.js";

const data = workerData as ScanWorkerData;
if (data.groups) mirrorLiveGroups(new SharedGroups(data.groups));
const tools = new ToolRunner(data.toolDirs);
// The deep reads kept between scans live as long as this thread; a new thread starts with none.
const interval = data.fullReadIntervalS ?? 0;
const cache = interval > 0 ? newScanCache(interval * 1000) : null;
// Tests name a module of their own probes; the agent always runs the registry's.
type Probes = Parameters<typeof scanNode>[1];
const probes: Probes = data.probesModule
  ? ((await import(data.probesModule)) as { PROBES: Probes }).PROBES
  : undefined;
const port = parentPort!;

port.on("message", (m: ToWorker) => {
  if (m.type === "close") {
    // Every tool call still running ends with its process group; then the thread.
    tools.close();
    process.exit(0);
  }
  void scanNode({ ...data.input, tools, cache, previous: m.previous }, probes).then(
    (report) => port.postMessage({ type: "report", id: m.id, report } satisfies FromWorker),
    (e: unknown) =>
      port.postMessage({
        type: "error",
        id: m.id,
        message: (e as Error)?.message ?? String(e),
      } satisfies FromWorker),
  );
});
port.postMessage({ type: "ready" } satisfies FromWorker);
