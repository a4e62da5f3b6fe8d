import type { MetricDescription } from "./agent-metrics.js";
import { metricDeprecation } from "./names.js";

// docs/metrics.md is this function's output: test/unit/metrics/doc.test.ts fails when they drift, and
// `npm run docs:metrics` rewrites the file.

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

function stabilityCell(name: string, stability: string | null): string {
  const d = metricDeprecation(name);
  return d === null
    ? (stability ?? "—")
    : `${stability ?? "—"}, deprecated (removed in ${d.removedIn}): read \`${d.use}\``;
}

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
        `| \`${m.name}\` | ${m.type} | ${m.labels.map((l) => `\`${l}\``).join(", ") || "—"} | ${stabilityCell(m.name, m.stability)} | ${cell(m.help)} |`,
    ),
    "",
    "## Findings: which metric answers what",
    "",
    "- `proxyscope_finding{id,severity}`: what is raised on the node now, at the severity it was raised at",
    "  (one rule can raise one id at two severities: `nftables-table-missing` is critical for the `ip`",
    "  table, a warning for `ip6` alone). Alerts and the collector's `--source prometheus` read it.",
    "- `proxyscope_finding_active{id}`: every finding id's state on the node: 1 raised, 0 checked and clear,",
    '  absent when something its check reads was not read. Dashboards read it: "it cleared" and "was it',
    '  even checked" are questions only this one answers.',
    "- `proxyscope_findings{severity}` is deprecated: `count by (severity) (proxyscope_finding)` is the same",
    "  count.",
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
