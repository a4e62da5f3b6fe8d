// Apart from the zod schema set so that `serve`'s flag parsing does not load every report schema on
// the serving thread (bench/results/rss.md).
export const SEVERITIES = ["info", "warning", "error", "critical"] as const;
