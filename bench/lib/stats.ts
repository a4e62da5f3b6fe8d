// Summaries for a noisy machine: every figure is a median with its spread (min..max) over runs.

export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export function summarize(values: readonly number[]): Summary {
  const s = [...values].filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return {
    median: quantile(s, 0.5),
    min: s[0] ?? Number.NaN,
    max: s[s.length - 1] ?? Number.NaN,
    n: s.length,
  };
}

export function percentiles(values: readonly number[]): {
  p50: number;
  p90: number;
  p99: number;
  max: number;
} {
  const s = [...values].sort((a, b) => a - b);
  return {
    p50: quantile(s, 0.5),
    p90: quantile(s, 0.9),
    p99: quantile(s, 0.99),
    max: s[s.length - 1] ?? Number.NaN,
  };
}

/** Least-squares slope of y over its index, per `per` steps (RSS growth per 100 scans). */
export function slope(y: readonly number[], per = 100): number {
  const n = y.length;
  if (n < 2) return 0;
  const mx = (n - 1) / 2;
  const my = y.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  y.forEach((v, i) => {
    num += (i - mx) * (v - my);
    den += (i - mx) ** 2;
  });
  return (num / den) * per;
}

/** "1.23 (1.10–1.40)" with `digits` decimals; a single run shows no spread. */
export function fmt(s: Summary, digits = 2, unit = ""): string {
  if (!Number.isFinite(s.median)) return "—";
  const f = (v: number) => v.toFixed(digits);
  return s.n > 1 && s.min !== s.max
    ? `${f(s.median)}${unit} (${f(s.min)}–${f(s.max)})`
    : `${f(s.median)}${unit}`;
}

/** Ratio of two summaries: median/median, spread from the extremes (min/max .. max/min). */
export function ratio(a: Summary, b: Summary): Summary {
  return { median: a.median / b.median, min: a.min / b.max, max: a.max / b.min, n: Math.min(a.n, b.n) };
}
