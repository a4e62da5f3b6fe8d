// How a cost grows with the node's size: the exponent k of cost ≈ c·N^k, read as the slope of
// log(cost) on log(N). k = 1 is linear; a fixed cost (Node's start, the reads that do not grow) pulls k
// below 1 at small N, and only a k above 1 says the cost outgrows the node. Pure, so a unit test pins it.

export interface Point {
  n: number;
  cost: number;
}

/** Least-squares slope of log(cost) on log(n); NaN with fewer than two usable sizes. */
export function exponent(points: readonly Point[]): number {
  const p = points.filter((x) => x.n > 0 && x.cost > 0 && Number.isFinite(x.cost));
  if (new Set(p.map((x) => x.n)).size < 2) return Number.NaN;
  const xs = p.map((x) => Math.log(x.n));
  const ys = p.map((x) => Math.log(x.cost));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return num / den;
}

/** The slope between each pair of neighbouring sizes (1,000→10,000, 10,000→30,000), smallest first. */
export function stepExponents(points: readonly Point[]): { from: number; to: number; k: number }[] {
  const p = [...points].filter((x) => x.n > 0 && x.cost > 0).sort((a, b) => a.n - b.n);
  const out: { from: number; to: number; k: number }[] = [];
  for (let i = 1; i < p.length; i++)
    out.push({
      from: p[i - 1]!.n,
      to: p[i]!.n,
      k: Math.log(p[i]!.cost / p[i - 1]!.cost) / Math.log(p[i]!.n / p[i - 1]!.n),
    });
  return out;
}

/**
 * The verdict the README carries: "at most linear" when no step grows faster than N^`tolerance` (1.15: a
 * step's two medians on a shared machine are not exact), "superlinear" naming the worst step, and
 * "unknown" without two sizes measured.
 */
export function growthVerdict(
  points: readonly Point[],
  tolerance = 1.15,
): { verdict: "at most linear" | "superlinear" | "unknown"; worst: number } {
  const steps = stepExponents(points);
  if (steps.length === 0) return { verdict: "unknown", worst: Number.NaN };
  const worst = Math.max(...steps.map((s) => s.k));
  return { verdict: worst <= tolerance ? "at most linear" : "superlinear", worst };
}

/**
 * The cost each further 1,000 of N adds, step by step: constant when the growth is linear beyond a
 * fixed part, which the log-log slope alone cannot tell from a slope below 1.
 */
export function marginalPer1000(points: readonly Point[]): { from: number; to: number; per1000: number }[] {
  const p = [...points].filter((x) => x.n >= 0 && Number.isFinite(x.cost)).sort((a, b) => a.n - b.n);
  const out: { from: number; to: number; per1000: number }[] = [];
  for (let i = 1; i < p.length; i++)
    out.push({
      from: p[i - 1]!.n,
      to: p[i]!.n,
      per1000: ((p[i]!.cost - p[i - 1]!.cost) / (p[i]!.n - p[i - 1]!.n)) * 1000,
    });
  return out;
}
