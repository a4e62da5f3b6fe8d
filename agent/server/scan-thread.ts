import { Worker, type ResourceLimits } from "node:worker_threads";
import { SharedGroups } from "../io/shared-groups.js";
import type { ScanInput } from "../scan.js";
import type { VerifyOptions } from "../verify/run.js";
import type { RuleOptions } from "../view/options.js";
import type { VerifyResult } from "../../common/verify-result.js";
import type { RenderedScan } from "./rendered-scan.js";

/** What the scan thread needs to build its own ToolRunner and scan input: plain data only. */
export interface ScanWorkerData {
  toolDirs: string[];
  /** Where kube-proxy's nft witness is (io/tools.ts); absent: the default. */
  kubeProxyNftDir?: string;
  input: Omit<ScanInput, "tools"> & { node: string; agentVersion: string; ruleOptions?: RuleOptions };
  /** Tests only: a module exporting PROBES to run instead of the registry's. */
  probesModule?: string;
  /** Seconds between two full reads of a source reused under an unchanged nf_tables generation; 0: no cache. */
  fullReadIntervalS?: number;
  /** Seconds between two reads of /proc/net/ip_vs_conn; 0 or absent: every scan. */
  ipvsConnIntervalS?: number;
  /** Set by ScanThread: where the worker lists its tools' process groups (io/shared-groups.ts). */
  groups?: SharedArrayBuffer;
  /** How /verify checks the last scan (it runs here, beside the report it checks). */
  verify?: VerifyOptions;
  /** Set by ScanThread on a restart: the last good report's JSON, the new thread's previous scan. */
  previousReport?: Uint8Array;
}

// The serving thread sends no report and receives only finished bodies and small plain objects.
export type ToWorker = { type: "scan"; id: number } | { type: "verify"; id: number } | { type: "close" };
export type FromWorker =
  | { type: "ready" }
  | { type: "report"; id: number; scan: RenderedScan }
  | { type: "error"; id: number; message: string }
  | { type: "verified"; id: number; result: VerifyResult }
  | { type: "verify-failed"; id: number; message: string }
  /** After a report was posted: the scan thread gave a large read's garbage back (heap-release.ts). */
  | { type: "heap-released"; freedBytes: number };

/** A scan that did not produce a report: the thread crashed, exited or was closed mid-scan. */
export class ScanThreadError extends Error {
  override readonly name = "ScanThreadError";
}

const WORKER_URL = new URL("./scan-worker.js", import.meta.url);

// --- resourceLimits (bench/results/rss.md) ---
// The scan thread's own V8 heap bounds. Young generation: V8's default lets a scan's garbage grow the
// worker's new space to tens of MB that stay committed between scans; a small one is collected more
// often instead. Old generation: headroom far above a 10,000-Service scan's peak, so only a runaway
// parse hits it, and then the worker dies with ERR_WORKER_OUT_OF_MEMORY: a failed scan (below), not
// a dead agent, and the next scan starts a fresh worker.
export const SCAN_THREAD_LIMITS: ResourceLimits = {
  maxYoungGenerationSizeMb: 6,
  maxOldGenerationSizeMb: 512,
};
// --- end resourceLimits ---

// In a container, 512 MB of scan heap is more than the whole agent may have (the DaemonSet's limit was
// 256Mi, now 320Mi): a runaway parse got the agent OOM-killed before the thread's own limit acted. So the limit
// comes from the container's memory limit, less what the rest of the process holds: bare Node 46 MB,
// the serving thread's modules 47 MB and its heap 27-52 MB (bench/results/rss.md), the scan thread's
// young generation and the tools' output buffers outside the heap. At the DaemonSet's 320Mi that
// leaves the scan thread 160 MB of old generation (a 10,000-Service scan peaks at 86-106 MB).
export const SERVING_RESERVE_MB = 160;
/** Below this a scan of even a small node fails; a container this small is misconfigured anyway. */
export const MIN_SCAN_HEAP_MB = 32;

/** The scan thread's limits under a container memory limit (null: none set, the defaults apply). */
export function scanThreadLimits(containerLimitBytes: number | null): ResourceLimits {
  if (containerLimitBytes === null) return SCAN_THREAD_LIMITS;
  const room = Math.floor(containerLimitBytes / (1024 * 1024)) - SERVING_RESERVE_MB;
  const max = SCAN_THREAD_LIMITS.maxOldGenerationSizeMb!;
  return { ...SCAN_THREAD_LIMITS, maxOldGenerationSizeMb: Math.min(max, Math.max(MIN_SCAN_HEAP_MB, room)) };
}

/**
 * Runs scans on a worker thread, one at a time: a probe's parsing never blocks the event loop that
 * serves /metrics and /report. A worker that crashes (an uncaught error, out of memory) fails the scan
 * it was running with a ScanThreadError, and the next scan starts a fresh worker; the last good report
 * stays served meanwhile, since only a report replaces it.
 */
export class ScanThread {
  private worker: Worker | null = null;
  private pending: {
    id: number;
    worker: Worker;
    resolve: (r: RenderedScan) => void;
    reject: (e: Error) => void;
  } | null = null;
  private readonly verifying = new Map<
    number,
    { worker: Worker; resolve: (r: VerifyResult) => void; reject: (e: Error) => void }
  >();
  /** The last report received: a thread started after a crash takes it as its previous scan. */
  private lastReport: Uint8Array | null = null;
  private seq = 0;
  /** Workers started so far (a crash makes the next scan start another). */
  started = 0;
  /** Process groups killed because their worker was gone (a crash, an exit, a terminate). */
  orphanGroupsKilled = 0;
  /** Told each time a scan thread gave its heap's garbage back, with the bytes V8 freed. */
  onHeapRelease: ((freedBytes: number) => void) | null = null;

  constructor(
    private readonly data: ScanWorkerData,
    private readonly url: URL = WORKER_URL,
    private readonly resourceLimits: ResourceLimits = SCAN_THREAD_LIMITS,
  ) {}

  /** One scan, judged against the thread's own previous report (cumulative failure counters). */
  scan(): Promise<RenderedScan> {
    if (this.pending !== null) return Promise.reject(new ScanThreadError("a scan is already running"));
    const w = this.worker ?? this.start();
    return new Promise((resolve, reject) => {
      const id = ++this.seq;
      this.pending = { id, worker: w, resolve, reject };
      w.postMessage({ type: "scan", id } satisfies ToWorker);
    });
  }

  /** The node acceptance check over the last report this thread produced (verify/run.ts). */
  verify(): Promise<VerifyResult> {
    const w = this.worker ?? this.start();
    return new Promise((resolve, reject) => {
      const id = ++this.seq;
      this.verifying.set(id, { worker: w, resolve, reject });
      w.postMessage({ type: "verify", id } satisfies ToWorker);
    });
  }

  /** Ends the worker (and, through its ToolRunner, every tool it runs); a scan still running fails. */
  async close(graceMs = 2_000): Promise<void> {
    const w = this.worker;
    if (w === null) return;
    const exited = new Promise<void>((r) => w.once("exit", () => r()));
    w.postMessage({ type: "close" } satisfies ToWorker);
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      exited.then(() => false),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs))),
    ]);
    clearTimeout(timer);
    if (late) await w.terminate();
  }

  private start(): Worker {
    // One list per worker: a new worker never inherits (or clears) the groups of the one that died.
    const groups = new SharedGroups();
    const previousReport = this.lastReport ?? undefined; // copied into the new thread, still served here
    const w = new Worker(this.url, {
      workerData: { ...this.data, groups: groups.buffer, previousReport },
      resourceLimits: this.resourceLimits,
    });
    this.started++;
    this.worker = w;
    w.on("message", (m: FromWorker) => {
      if (m.type === "verified" || m.type === "verify-failed") return this.verified(w, m);
      if (m.type === "heap-released") return this.onHeapRelease?.(m.freedBytes);
      if (m.type === "ready" || this.pending?.worker !== w || m.id !== this.pending.id) return;
      const p = this.pending;
      this.pending = null;
      if (m.type === "report") {
        this.lastReport = m.scan.report;
        p.resolve(m.scan);
      } else p.reject(new ScanThreadError(`scan failed in the scan thread: ${m.message}`));
    });
    // A crashed thread is done at once: the next scan must not be posted to it while it exits.
    w.on("error", (e: Error) => {
      this.forget(w);
      this.fail(w, `scan thread crashed: ${e.message}`);
    });
    w.on("exit", (code) => {
      // However the thread ended, a tool it started must not outlive it (its exit hooks may not
      // have run: terminate() and a fatal error skip them).
      this.orphanGroupsKilled += groups.killAll();
      this.forget(w);
      this.fail(w, `scan thread exited (code ${code}) before the scan finished`);
    });
    return w;
  }

  private forget(w: Worker): void {
    if (this.worker === w) this.worker = null;
  }

  private verified(w: Worker, m: Extract<FromWorker, { type: "verified" | "verify-failed" }>): void {
    const v = this.verifying.get(m.id);
    if (v === undefined || v.worker !== w) return;
    this.verifying.delete(m.id);
    if (m.type === "verified") v.resolve(m.result);
    else v.reject(new ScanThreadError(`verify failed in the scan thread: ${m.message}`));
  }

  private fail(w: Worker, message: string): void {
    for (const [id, v] of this.verifying) {
      if (v.worker !== w) continue;
      this.verifying.delete(id);
      v.reject(new ScanThreadError(message));
    }
    const p = this.pending;
    if (p === null || p.worker !== w) return;
    this.pending = null;
    p.reject(new ScanThreadError(message));
  }
}
