// Runs in a worker thread with the scan thread's resource limits (test/unit/server/heap-release.test.ts):
// makes a scan's worth of garbage (a large parsed JSON document, dropped), then lets HeapRelease decide,
// and reports the V8 heap before and after. A helper, not a test file: tap would run it on its own.
import { getHeapStatistics } from "node:v8";
import { parentPort, workerData } from "node:worker_threads";
import { exposedGc, HEAP_RELEASE_GROWTH_BYTES, HeapRelease } from "../../agent/server/heap-release.js";

const { garbageItems } = workerData as { garbageItems: number };
const heap = new HeapRelease({ growthBytes: HEAP_RELEASE_GROWTH_BYTES, gc: exposedGc() });
const total = () => getHeapStatistics().total_heap_size;
const sizes: { label: string; before: number; after: number; released: boolean }[] = [];
let kept: unknown[] = [];

// What a full nft read does: one big text, parsed, mostly dropped by the time the scan ends.
function read(items: number): void {
  const text = JSON.stringify({
    nftables: Array.from({ length: items }, (_, i) => ({ chain: { name: `c-${i}` } })),
  });
  const doc = JSON.parse(text) as { nftables: unknown[] };
  kept = doc.nftables.slice(0, 10);
}

function scan(label: string, items: number): void {
  read(items);
  const before = total();
  const released = heap.afterScan() !== null;
  sizes.push({ label, before, after: total(), released });
}

scan("small", 1000);
scan("large", garbageItems);
scan("small again", 1000);
parentPort!.postMessage({ sizes, gcAvailable: exposedGc() !== null, kept: kept.length });
