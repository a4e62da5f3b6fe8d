import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

// Memory. After a scan that read a lot (the hourly nf_tables full read at 10,000 Services)
// the scan thread's heap is mostly garbage that V8 keeps committed: no later scan
// allocates enough to start a major GC, so RSS stays at the high-water mark (bench/results/rss.md). A
// memory-reducing GC ("last resort": V8 collects twice and gives free pages back at once) took RSS from
// 154 to 75 MB after a 10,000-Service read, for ~60 ms of CPU. It runs only when the heap grew by a
// margin since the last one, so a steady scan (a few MB) never pays for it. In ipvs mode at 10,000
// Services (UML) no scan grew the heap that far: none ran (bench/results/heap-release-ipvs.md).

export type MajorGc = (opts: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void;

/**
 * V8's gc() without starting node with --expose-gc: the flag is read when a context is made, so it is
 * set just for one new context and unset again. Null when this V8 does not hand one out.
 */
export function exposedGc(): MajorGc | null {
  try {
    setFlagsFromString("--expose-gc");
    const gc: unknown = runInNewContext("gc");
    return typeof gc === "function" ? (gc as MajorGc) : null;
  } catch {
    return null;
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
}

interface HeapReleaseOptions {
  /** Growth of the heap since the last reduction (or the start) that makes the next one run. */
  growthBytes: number;
  gc: MajorGc | null;
  heapBytes?: () => number;
}

export const HEAP_RELEASE_GROWTH_BYTES = 24 * 1024 * 1024;

/** Decides after each scan whether to give the scan's garbage back to the OS. */
export class HeapRelease {
  private baseline: number;
  private readonly heapBytes: () => number;
  reductions = 0;

  constructor(private readonly opts: HeapReleaseOptions) {
    this.heapBytes = opts.heapBytes ?? (() => getHeapStatistics().total_heap_size);
    this.baseline = this.heapBytes();
  }

  /** Runs the reducing GC when the heap outgrew the baseline: the heap bytes it gave back, or null when it did not run. */
  afterScan(): number | null {
    if (this.opts.gc === null) return null;
    const before = this.heapBytes();
    if (before - this.baseline < this.opts.growthBytes) return null;
    this.opts.gc({ type: "major", execution: "sync", flavor: "last-resort" });
    this.baseline = this.heapBytes();
    this.reductions++;
    return Math.max(0, before - this.baseline);
  }
}
