#!/usr/bin/env node
// Copies the mixin's sources of the alert rules and the Grafana dashboard (mixin/, with their placeholders)
// into the Helm chart (charts/proxyscope/files/), whose templates can read only files inside the chart
// (.Files.Get) and fill the placeholders from the `monitoring` values. Edit mixin/, then run
// scripts/mixin.mjs (which runs this). `--check` exits 1 instead of writing when a copy differs
// (test/unit/deploy/helm-chart.test.ts checks the same).
import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const CHART_COPIES = [
  ["mixin/proxyscope-rules.yaml", "charts/proxyscope/files/proxyscope-rules.yaml"],
  ["mixin/proxyscope-dashboard.json", "charts/proxyscope/files/proxyscope-dashboard.json"],
];

let stale = 0;
for (const [from, to] of CHART_COPIES) {
  const want = readFileSync(join(root, from));
  let have = null;
  try {
    have = readFileSync(join(root, to));
  } catch {
    /* missing counts as different */
  }
  if (have !== null && have.equals(want)) continue;
  if (process.argv.includes("--check")) {
    process.stderr.write(`${to} differs from ${from}: run node scripts/mixin.mjs\n`);
    stale++;
  } else {
    writeFileSync(join(root, to), want);
  }
}
process.exit(stale > 0 ? 1 : 0);
