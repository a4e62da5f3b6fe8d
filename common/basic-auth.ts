import { createHmac, randomBytes } from "node:crypto";

// Basic auth against bcrypt hashes, bounded: bcryptjs runs on the serving thread, so without bounds a
// flood of wrong passwords takes a core, and a known user whose hash costs more than the stand-in used
// for unknown users answers slower and can be told apart by timing. As the toolkit (exporter-toolkit
// web/handler.go): a stand-in hash for unknown users, one comparison at a time, verdicts remembered.

// Remembered good credentials: what Prometheus sends every scrape costs one comparison per window.
const GOOD_TTL_MS = 5 * 60_000;
const GOOD_MAX = 64;
// Remembered refusals: a client retrying one wrong password costs one comparison. Kept apart from the
// good ones, so a flood of distinct wrong passwords cannot push Prometheus's credentials out.
const BAD_MAX = 256;
// The toolkit runs one comparison at a time (bcryptMtx); the next is refused (429), not queued,
// unless it is for the very credentials being compared.
const MAX_IN_FLIGHT = 1;
// Comparisons may take at most a quarter of one core on average (a leaky bucket of wall time spent
// comparing, which on a busy thread only overstates the CPU), with a second's worth of burst.
const BUDGET_RATE = 0.25;
const BUDGET_BURST_MS = 1_000;

const COST = /^\$2[aby]\$(\d\d)\$/;

interface BasicAuthOptions {
  /** Milliseconds clock for the budget and the remembered verdicts (tests step it). */
  now?: () => number;
  /** Burst of the comparison budget, in ms of comparing. */
  budgetMs?: number;
}

export class BasicAuthChecker {
  /** The cost of the stand-in hash unknown users are compared with: the highest among the users. */
  readonly dummyCost: number;
  private readonly dummy: Promise<string> | null;
  // Keyed with a secret of this process: the cache holds no hash an attacker could test passwords on.
  private readonly key = randomBytes(32);
  private readonly good = new Map<string, number>();
  private readonly bad = new Set<string>();
  private readonly running = new Map<string, Promise<boolean>>();
  private inFlight = 0;
  private runs = 0;
  private tokens: number;
  private tokensAt: number;
  private readonly now: () => number;
  private readonly burstMs: number;
  // Loaded only where basic auth is configured: it is ~6 MB of the serving thread's RSS otherwise.
  private bcrypt: Promise<typeof import("bcryptjs").default> | null = null;

  constructor(
    private readonly users: ReadonlyMap<string, string>,
    opts: BasicAuthOptions = {},
  ) {
    this.now = opts.now ?? (() => performance.now());
    this.burstMs = opts.budgetMs ?? BUDGET_BURST_MS;
    this.tokens = this.burstMs;
    this.tokensAt = this.now();
    const costs = [...users.values()].map((h) => Number(COST.exec(h)?.[1] ?? 10));
    this.dummyCost = costs.length > 0 ? Math.max(...costs) : 0;
    // Made once at start, at that cost, from a password nobody knows.
    this.dummy =
      users.size > 0
        ? this.loadBcrypt().then((b) => b.hash(randomBytes(18).toString("base64"), this.dummyCost))
        : null;
    this.dummy?.catch(() => undefined);
  }

  private loadBcrypt() {
    return (this.bcrypt ??= import("bcryptjs").then((m) => m.default));
  }

  /** The stand-in hash for unknown users (for tests: its cost). */
  async dummyHash(): Promise<string> {
    if (this.dummy === null) throw new Error("no users: no stand-in hash");
    return this.dummy;
  }

  /** How many bcrypt comparisons have run. */
  get bcryptRuns(): number {
    return this.runs;
  }

  private level(): number {
    const t = this.now();
    this.tokens = Math.min(this.burstMs, this.tokens + (t - this.tokensAt) * BUDGET_RATE);
    this.tokensAt = t;
    return this.tokens;
  }

  /** Seconds until the budget allows a comparison again (at least 1). */
  retryAfterS(): number {
    return Math.max(1, Math.ceil((1 - this.level()) / (BUDGET_RATE * 1000)));
  }

  private cacheKey(user: string, password: string, hash: string): string {
    return createHmac("sha256", this.key)
      .update(JSON.stringify([user, password, hash]))
      .digest("base64");
  }

  /** true / false, or "busy" when a comparison is running or the budget is spent (answer 429). */
  async check(user: string, password: string): Promise<boolean | "busy"> {
    const hash = this.users.get(user);
    const key = this.cacheKey(user, password, hash ?? "");
    const until = this.good.get(key);
    if (until !== undefined) {
      if (this.now() < until) return true;
      this.good.delete(key);
    }
    if (this.bad.has(key)) return false;
    // The same credentials already being compared (a scrape and its retry, two clients of one
    // Secret): wait for that verdict rather than refuse; it costs no comparison more.
    const running = this.running.get(key);
    if (running !== undefined) return running;
    if (this.inFlight >= MAX_IN_FLIGHT || this.level() <= 0) return "busy";
    const verdict = this.compare(key, password, hash);
    this.running.set(key, verdict);
    try {
      return await verdict;
    } finally {
      this.running.delete(key);
    }
  }

  private async compare(key: string, password: string, hash: string | undefined): Promise<boolean> {
    this.inFlight++;
    const started = this.now();
    try {
      const against = hash ?? (await this.dummyHash());
      this.runs++;
      const ok = (await (await this.loadBcrypt()).compare(password, against)) && hash !== undefined;
      if (ok) {
        if (this.good.size >= GOOD_MAX) this.good.delete(this.good.keys().next().value!);
        this.good.set(key, this.now() + GOOD_TTL_MS);
      } else {
        if (this.bad.size >= BAD_MAX) this.bad.delete(this.bad.values().next().value!);
        this.bad.add(key);
      }
      return ok;
    } finally {
      this.level();
      this.tokens -= this.now() - started;
      this.inFlight--;
    }
  }
}
