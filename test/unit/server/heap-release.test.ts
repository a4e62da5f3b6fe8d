import t from "tap";
import { Worker } from "node:worker_threads";
import { HeapRelease, type MajorGc } from "../../../agent/server/heap-release.js";
import { SCAN_THREAD_LIMITS } from "../../../agent/server/scan-thread.js";

t.test("the reducing GC runs only when the heap outgrew the last one by the margin", async (t) => {
  let heap = 10;
  const calls: unknown[] = [];
  const gc: MajorGc = (o) => {
    calls.push(o);
    heap = 12;
  };
  const r = new HeapRelease({ growthBytes: 24, gc, heapBytes: () => heap });
  heap = 33;
  t.equal(r.afterScan(), null, "grew 23 of 24: not yet");
  heap = 34;
  t.equal(r.afterScan(), 22, "grew 24: runs, and says what it gave back (34 - 12)");
  t.same(calls, [{ type: "major", execution: "sync", flavor: "last-resort" }]);
  heap = 30;
  t.equal(r.afterScan(), null, "measured from what was left after it (12), not from the start");
  heap = 36;
  t.equal(r.afterScan(), 24);
  t.equal(r.reductions, 2);
  const none = new HeapRelease({ growthBytes: 0, gc: null, heapBytes: () => heap });
  heap = 1e9;
  t.equal(none.afterScan(), null, "no gc handed out: never runs, never throws");
});

t.test(
  "in a worker with the scan thread's limits, a large scan's garbage goes back, small scans pay nothing",
  async (t) => {
    const w = new Worker(new URL("../../helpers/heap-release-worker.ts", import.meta.url), {
      workerData: { garbageItems: 600_000 },
      resourceLimits: SCAN_THREAD_LIMITS,
    });
    const msg = await new Promise<{
      sizes: { label: string; before: number; after: number; released: boolean }[];
      gcAvailable: boolean;
      kept: number;
    }>((resolve, reject) => {
      w.once("message", resolve);
      w.once("error", reject);
    });
    await w.terminate();
    t.equal(msg.gcAvailable, true, "V8 hands out gc() without --expose-gc on the command line");
    t.equal(msg.kept, 10);
    const [small, large, again] = msg.sizes;
    const mb = (b: number) => Math.round(b / 1048576);
    t.equal(small!.released, false, `small scan: heap ${mb(small!.before)} MB, not released`);
    t.equal(large!.released, true, `large scan: heap ${mb(large!.before)} MB, released`);
    t.ok(
      large!.after < large!.before / 2,
      `the heap after the release (${mb(large!.after)} MB) is under half of before (${mb(large!.before)} MB)`,
    );
    t.equal(again!.released, false, `the next small scan: heap ${mb(again!.before)} MB, not released`);
  },
);
