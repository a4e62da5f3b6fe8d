// Preloaded into the agent under test (`node --import .../mem-preload.js agent/cli.js serve`): each
// thread's own heap (the serving thread and the scan worker are separate V8 isolates), so the RSS
// benchmark can tell whose memory it is without changing the agent. `--import` runs in worker threads
// too. Every $PXBENCH_MEM_MS (default 250) ms, one line per thread is appended to $PXBENCH_MEM_OUT:
// {"t", "thread": "main"|"worker-N", rss, heapUsed, heapTotal, external, arrayBuffers (process.memoryUsage:
// rss is the process's, the rest this isolate's), mallocedMb, peakMallocedMb (v8.getHeapStatistics)}, MB.
import { appendFileSync } from "node:fs";
import { getHeapStatistics } from "node:v8";
import { isMainThread, threadId } from "node:worker_threads";

const out = process.env.PXBENCH_MEM_OUT;
const MB = 2 ** 20;
const r1 = (n: number) => Math.round((n / MB) * 10) / 10;
if (out) {
  const thread = isMainThread ? "main" : `worker-${threadId}`;
  setInterval(
    () => {
      const m = process.memoryUsage();
      const h = getHeapStatistics();
      const line = {
        t: Date.now(),
        thread,
        rss: r1(m.rss),
        heapUsed: r1(m.heapUsed),
        heapTotal: r1(m.heapTotal),
        external: r1(m.external),
        arrayBuffers: r1(m.arrayBuffers),
        mallocedMb: r1(h.malloced_memory),
        peakMallocedMb: r1(h.peak_malloced_memory),
      };
      appendFileSync(out, `${JSON.stringify(line)}\n`);
    },
    Number(process.env.PXBENCH_MEM_MS ?? 250),
  ).unref();
}
