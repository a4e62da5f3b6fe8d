import { Worker } from "node:worker_threads";
import { JUDGE_HEAP_MB, TOO_LARGE } from "./answer-bounds.js";
import { judgeAnswer, type AnswerRoute, type ParsedDigest } from "./observe.js";

export interface JudgeRequest {
  id: number;
  route: AnswerRoute;
  body: string;
}
export interface JudgeReply {
  id: number;
  parsed: ParsedDigest;
}

/** Turns an answer's body into the digest the rollup reads, or the named reason it is none. */
export interface Judge {
  judge(route: AnswerRoute, body: string): Promise<ParsedDigest>;
}

/** In this thread, bounded only by the JSON counts (observe.ts): for single calls and tests. */
export const inlineJudge: Judge = { judge: (route, body) => Promise.resolve(judgeAnswer(route, body)) };

const WORKER_URL = new URL("./answer-judge-worker.js", import.meta.url);

// The single executable (scripts/build-sea.mjs) has no file beside it to start a worker from: its build
// embeds the worker's own bundle as this string, and the worker runs from that text. Elsewhere the
// name is not defined and the worker file is used.
declare const PROXYSCOPE_EMBEDDED_JUDGE_WORKER: string | undefined;
const EMBEDDED_WORKER =
  typeof PROXYSCOPE_EMBEDDED_JUDGE_WORKER === "string" ? PROXYSCOPE_EMBEDDED_JUDGE_WORKER : null;

interface Job extends JudgeRequest {
  resolve: (p: ParsedDigest) => void;
}

/**
 * Judges a gather's answers on a worker thread with a heap limit (JUDGE_HEAP_MB), one answer at a
 * time: an answer whose parse or validation outgrows it ends the worker, becomes its own node's named
 * failure, and the next answer is judged by a fresh worker. One at a time, so a worker's death costs
 * only the answer it was judging, never one queued behind it.
 */
export class AnswerJudge implements Judge {
  private worker: Worker | null = null;
  private current: Job | null = null;
  private readonly queue: Job[] = [];
  private seq = 0;
  /** Workers started so far: a worker that died is replaced for the next answer. */
  started = 0;

  constructor(
    private readonly heapMb = JUDGE_HEAP_MB,
    private readonly url: URL = WORKER_URL,
  ) {}

  judge(route: AnswerRoute, body: string): Promise<ParsedDigest> {
    return new Promise((resolve) => {
      this.queue.push({ id: ++this.seq, route, body, resolve });
      this.next();
    });
  }

  /** Ends the worker; call when no judgement is awaited any more (the end of a gather). */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    for (const j of this.queue.splice(0)) j.resolve(failed("the collector stopped before judging it"));
    this.current?.resolve(failed("the collector stopped before judging it"));
    this.current = null;
    await w?.terminate();
  }

  private next(): void {
    if (this.current !== null) return;
    const job = this.queue.shift();
    // An idle worker must not keep a finished command alive.
    if (job === undefined) return void this.worker?.unref();
    this.current = job;
    const w = this.worker ?? this.start();
    w.ref();
    w.postMessage({ id: job.id, route: job.route, body: job.body } satisfies JudgeRequest);
  }

  private start(): Worker {
    const resourceLimits = { maxOldGenerationSizeMb: this.heapMb, maxYoungGenerationSizeMb: 8 };
    const w =
      EMBEDDED_WORKER !== null && this.url === WORKER_URL
        ? new Worker(EMBEDDED_WORKER, { eval: true, resourceLimits })
        : new Worker(this.url, { resourceLimits });
    this.started++;
    this.worker = w;
    w.on("message", (m: JudgeReply) => {
      const job = this.current;
      if (this.worker !== w || job === null || m.id !== job.id) return;
      this.current = null;
      job.resolve(m.parsed);
      this.next();
    });
    w.on("error", (e: Error & { code?: string }) => this.lost(w, e));
    w.on("exit", (code) => this.lost(w, new Error(`the thread judging answers exited (code ${code})`)));
    return w;
  }

  private lost(w: Worker, e: Error & { code?: string }): void {
    if (this.worker !== w) return;
    this.worker = null;
    const job = this.current;
    this.current = null;
    job?.resolve(
      failed(
        e.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? `${TOO_LARGE}: parsing and validating it took more than the ${this.heapMb} MB of heap an answer may use`
          : `could not be judged: ${e.message}`,
      ),
    );
    this.next();
  }
}

const failed = (reason: string): ParsedDigest => ({ ok: false, outcome: "garbage", reason });
