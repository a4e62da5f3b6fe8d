/**
 * Bytes of agent answers held at once across a whole gather. A cap per answer alone let 12 agents
 * answering 16 MiB each take the collector to 578 MB, past its 512 Mi limit.
 *
 * The gather's budget (gatherBudget) reserves nothing for a call until its answer's headers arrive,
 * then the whole declared length (the per-answer cap when none is declared) in one go, waiting first
 * come first served while holding nothing: an agent that has not answered yet costs no bytes, so the
 * calls in flight are bounded by the bytes they bring, not by a count. A reader holding
 * its whole answer's room never waits again, so no set of readers can block each other.
 *
 * Every read starts with a small reservation (`initial`, enough for any ordinary report) taken at
 * once; an answer that grows past it waits, first come first served, until its whole per-answer cap
 * fits. Readers holding the whole cap never wait again, so they finish (or hit their cap or deadline)
 * and free it: with `total >= readers * initial + perAnswer` some waiter can always go on, and no set
 * of readers can block each other. Bytes are counted while they are read and until the caller is
 * done with the answer (`release`), not only while on the wire.
 */
interface ByteBudgetOptions {
  total: number;
  perAnswer: number;
  initial: number;
}

export class ByteBudget {
  readonly total: number;
  readonly perAnswer: number;
  readonly initial: number;
  /** Reserved bytes now, and the most ever reserved at once: an upper bound of what is held. */
  reserved = 0;
  peakReserved = 0;
  /** Bytes actually read and not yet released, and their peak. */
  used = 0;
  peakUsed = 0;
  private readonly waiting: { need: number; go: () => void }[] = [];

  constructor(o: ByteBudgetOptions) {
    this.total = o.total;
    this.perAnswer = o.perAnswer;
    this.initial = Math.min(o.initial, o.perAnswer);
  }

  lease(): Lease {
    this.take(this.initial);
    return new Lease(this);
  }

  /** @internal */
  take(n: number): void {
    this.reserved += n;
    this.peakReserved = Math.max(this.peakReserved, this.reserved);
  }

  /** @internal */
  give(reserved: number, used: number): void {
    this.reserved -= reserved;
    this.used -= used;
    this.wake();
  }

  /** @internal */
  count(n: number): void {
    this.used += n;
    this.peakUsed = Math.max(this.peakUsed, this.used);
  }

  /** @internal Resolves once `need` more bytes fit; false if the signal aborts first. */
  wait(need: number, signal: AbortSignal): Promise<boolean> {
    if (this.waiting.length === 0 && this.reserved + need <= this.total) {
      this.take(need);
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const entry = {
        need,
        go: () => {
          signal.removeEventListener("abort", onAbort);
          this.take(need);
          resolve(true);
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(false);
        this.wake();
      };
      if (signal.aborted) return resolve(false);
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  private wake(): void {
    while (this.waiting.length > 0 && this.reserved + this.waiting[0]!.need <= this.total)
      this.waiting.shift()!.go();
  }
}

/** One answer's share of the budget; what httpGet reports each chunk to. */
export class Lease {
  private reserved: number;
  private used = 0;
  private released = false;
  /** How long this answer waited for room, for the message when its deadline ends the wait. */
  waitedMs = 0;

  constructor(private readonly budget: ByteBudget) {
    this.reserved = budget.initial;
  }

  /**
   * The answer will be `length` bytes (null: undeclared, up to the per-answer cap): waits until that
   * much room is reserved. False: aborted while waiting.
   */
  async expect(length: number | null, signal: AbortSignal): Promise<boolean> {
    if (this.released) return false;
    const want = Math.min(length ?? this.budget.perAnswer, this.budget.perAnswer);
    if (want <= this.reserved) return true;
    const started = performance.now();
    const ok = await this.budget.wait(want - this.reserved, signal);
    this.waitedMs += performance.now() - started;
    if (!ok) return false;
    this.reserved = want;
    return true;
  }

  /** Counts `n` more bytes, waiting for room past the first reservation. False: aborted while waiting. */
  async add(n: number, signal: AbortSignal): Promise<boolean> {
    if (this.released) return false;
    if (this.used + n > this.reserved && this.reserved < this.budget.perAnswer) {
      const started = performance.now();
      const ok = await this.budget.wait(this.budget.perAnswer - this.reserved, signal);
      this.waitedMs += performance.now() - started;
      if (!ok) return false;
      this.reserved = this.budget.perAnswer;
    }
    this.used += n;
    this.budget.count(n);
    return true;
  }

  /** The answer read so far is dropped (a retry): its bytes no longer count, the reservation stays. */
  reset(): void {
    this.budget.give(0, this.used);
    this.used = 0;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.give(this.reserved, this.used);
  }
}

/**
 * The gather's default: eight answers at the 4 MiB cap (answer-bounds.ts) at once, ~170 whole 195 KB
 * reports of 10,000-Service nodes from older agents, or thousands of 2 KB /report/fleet digests.
 * (At 64 MiB and a 16 MiB cap, a 5,000-node gather's RSS stayed under 300 MB:
 * bench/results/collector-speed.md.)
 */
const DEFAULT_BYTES_IN_FLIGHT = 32 * 1024 * 1024;

/**
 * The budget of a gather: nothing reserved before an answer's headers (Lease.expect), never below one
 * whole answer. `concurrency` no longer sizes it: the calls in flight are bounded by these bytes.
 */
export function gatherBudget(o: { perAnswer: number; total?: number }): ByteBudget {
  return new ByteBudget({
    total: Math.max(o.total ?? DEFAULT_BYTES_IN_FLIGHT, o.perAnswer),
    perAnswer: o.perAnswer,
    initial: 0,
  });
}
