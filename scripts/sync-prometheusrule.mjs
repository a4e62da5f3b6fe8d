#!/usr/bin/env node
// Writes manifests/monitoring/prometheusrule.yaml from manifests/alerts/proxyscope-rules.yaml, so the
// PrometheusRule and the plain rule file (the one promtool tests) carry the same groups.
// `--check` exits 1 instead of writing when the two differ (test/unit/deploy checks it too).
import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const rulesPath = join(root, "manifests/alerts/proxyscope-rules.yaml");
const outPath = join(root, "manifests/monitoring/prometheusrule.yaml");

export function renderPrometheusRule(rulesText) {
  const rules = parse(rulesText);
  const doc = {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PrometheusRule",
    metadata: {
      name: "proxyscope",
      namespace: "proxyscope",
      labels: { "app.kubernetes.io/name": "proxyscope" },
    },
    spec: { groups: rules.groups },
  };
  const header =
    "# GENERATED from manifests/alerts/proxyscope-rules.yaml by scripts/sync-prometheusrule.mjs: edit that\n" +
    "# file (the one promtool tests), then run the script. A test fails when the two differ.\n";
  return header + stringify(doc, { lineWidth: 0 });
}

const want = renderPrometheusRule(readFileSync(rulesPath, "utf8"));
if (process.argv.includes("--check")) {
  let have = "";
  try {
    have = readFileSync(outPath, "utf8");
  } catch {
    /* missing counts as different */
  }
  if (have !== want) {
    process.stderr.write(`${outPath} is out of date: run node scripts/mixin.mjs\n`);
    process.exit(1);
  }
} else {
  writeFileSync(outPath, want);
}
