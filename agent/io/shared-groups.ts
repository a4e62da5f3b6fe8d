/**
 * The process groups a scan thread's tool calls run in, written where its parent thread can read
 * them: a worker that crashes or is terminated runs none of its own exit hooks, and the
 * tools it started would outlive it. The worker writes each group on spawn and clears it once the
 * group is gone; the parent kills whatever is still listed when the worker is gone. Fixed slots in
 * a SharedArrayBuffer, written with Atomics, so no message can be lost with a dying thread.
 */
export class SharedGroups {
  private readonly slots: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4 * SharedGroups.SLOTS)) {
    this.slots = new Int32Array(buffer);
  }

  // A scan runs its probes a few at a time, each one call after another: far fewer groups at once.
  static readonly SLOTS = 256;

  add(pgid: number): boolean {
    for (let i = 0; i < this.slots.length; i++) {
      if (Atomics.compareExchange(this.slots, i, 0, pgid) === 0) return true;
    }
    return false;
  }

  delete(pgid: number): void {
    for (let i = 0; i < this.slots.length; i++) {
      if (Atomics.compareExchange(this.slots, i, pgid, 0) === pgid) return;
    }
  }

  list(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.slots.length; i++) {
      const v = Atomics.load(this.slots, i);
      if (v !== 0) out.push(v);
    }
    return out;
  }

  /** SIGKILLs every group still listed and clears the list; returns how many were listed. */
  killAll(): number {
    const groups = this.list();
    for (const pgid of groups) {
      try {
        process.kill(-pgid, "SIGKILL");
      } catch {
        // ESRCH: nobody left in that group
      }
      this.delete(pgid);
    }
    return groups.length;
  }
}
