/**
 * A fixed budget of calls per window for the whole agent, not per client: what it protects is the
 * node's CPU, which many clients would share. `take()` spends one call or says how long until the
 * window resets.
 */
export class RateBudget {
  private windowStart = Number.NEGATIVE_INFINITY;
  private used = 0;

  constructor(
    private readonly calls: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  private roll(): number {
    const t = this.now();
    if (t - this.windowStart >= this.windowMs) {
      this.windowStart = t;
      this.used = 0;
    }
    return t;
  }

  /** Seconds until a call is allowed again, or 0 when one is allowed now (nothing spent). */
  waitS(): number {
    const t = this.roll();
    if (this.used < this.calls) return 0;
    return Math.max(1, Math.ceil((this.windowStart + this.windowMs - t) / 1000));
  }

  spend(): void {
    this.roll();
    this.used++;
  }
}
