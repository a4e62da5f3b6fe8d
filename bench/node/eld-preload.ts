// Preloaded into the agent under test (`node --import .../eld-preload.js agent/cli.js serve`): the
// serving thread's event-loop delay, so the benchmark sees the longest block during a scan without
// changing the agent. Every 250 ms one line `{"t":ms,"maxMs":..,"p99Ms":..}` is appended to
// $PXBENCH_ELD_OUT and the histogram reset. Worker threads (the scan) are not measured.
import { appendFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { isMainThread } from "node:worker_threads";

const out = process.env.PXBENCH_ELD_OUT;
if (isMainThread && out) {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  setInterval(() => {
    if (h.count > 0)
      appendFileSync(
        out,
        `${JSON.stringify({ t: Date.now(), maxMs: h.max / 1e6, p99Ms: h.percentile(99) / 1e6 })}\n`,
      );
    h.reset();
  }, 250).unref();
}
