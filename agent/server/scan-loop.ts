import type { RenderedScan } from "./rendered-scan.js";

interface ScanLoopOptions {
  scan: () => Promise<RenderedScan>;
  intervalMs: number;
  onScan: (scan: RenderedScan) => void;
  /** A tick found the previous scan still running and was skipped. */
  onOverrun: () => void;
  /** A scan that ended without a report (scanNode never throws for the node; its thread may die): the loop keeps going. */
  onError: (e: unknown) => void;
}

/**
 * Scans once at start, then on every tick. Scans never overlap: a tick that finds a scan running is
 * skipped and counted, so a scan that outlasts the interval delays the next one to the following
 * tick instead of stacking scans on a node that is already slow to read.
 */
export class ScanLoop {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly opts: ScanLoopOptions) {}

  start(): void {
    this.tick();
    this.timer = setInterval(() => this.tick(), this.opts.intervalMs);
  }

  get scanning(): boolean {
    return this.inFlight !== null;
  }

  /** Stops ticking and waits up to `graceMs` for a running scan to finish. */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    const running = this.inFlight;
    if (running === null) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([running, new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
  }

  private tick(): void {
    if (this.stopped) return;
    if (this.inFlight !== null) {
      this.opts.onOverrun();
      return;
    }
    this.inFlight = this.runOnce().finally(() => {
      this.inFlight = null;
    });
  }

  private async runOnce(): Promise<void> {
    try {
      const scan = await this.opts.scan();
      if (!this.stopped) this.opts.onScan(scan);
    } catch (e) {
      this.opts.onError(e);
    }
  }
}
