import type { MetricDescription } from "./agent-metrics.js";

// docs/metrics.md is this function's output: test/unit/metrics/doc.test.ts fails when they drift, and
// `npm run docs:metrics` rewrites the file.

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function metricsDoc(metrics: readonly MetricDescription[]): string {
  const ours = metrics.filter((m) => m.name.startsWith("proxyscope_"));
  const runtime = metrics.filter((m) => !m.name.startsWith("proxyscope_"));
  const lines = [
    "# Metrics the agent exports",
    "",
    "Generated from the agent's registry by `npm run docs:metrics`; `test/unit/metrics/doc.test.ts` fails when",
    "this page and the code drift apart. Every label is bounded: probe names, finding ids, enum values,",
    "netfilter families, and in `proxyscope_node_info` one value per label per node. A metric fed by a probe",
    "that failed is absent from the scrape, never 0 (`proxyscope_probe_success` says which probe failed).",
    "A **stable** metric keeps its name, type and label names across releases; an **experimental** one may",
    "change or go in any release ([compatibility.md](compatibility.md#metrics)).",
    "",
    "| name | type | labels | stability | meaning |",
    "| --- | --- | --- | --- | --- |",
    ...ours.map(
      (m) =>
        `| \`${m.name}\` | ${m.type} | ${m.labels.map((l) => `\`${l}\``).join(", ") || "—"} | ${m.stability ?? "—"} | ${cell(m.help)} |`,
    ),
    "",
    "## The agent process",
    "",
    "`serve` also exports prom-client's default process and Node.js runtime metrics (the `*_total`-named",
    "`nodejs_active_*` gauges are dropped: their per-type siblings carry the same numbers):",
    "",
    ...runtime.map((m) => `- \`${m.name}\` (${m.type})`),
    "",
  ];
  return lines.join("\n");
}
