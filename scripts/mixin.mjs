#!/usr/bin/env node
// The proxyscope monitoring mixin, after the monitoring-mixins convention (github.com/monitoring-mixins/docs):
// mixin/proxyscope-rules.yaml and mixin/proxyscope-dashboard.json are the one source of the alert rules and
// the dashboard, written with placeholders a small config fills in. This renders them:
//
//   node scripts/mixin.mjs                    regenerate the repository's copies with the default config
//   node scripts/mixin.mjs --check            exit 1 when a copy is out of date (test/unit/deploy checks it)
//   node scripts/mixin.mjs --config '{"agentSelector":"job=\"my-agent\""}' --out DIR
//                                             render a user's config into DIR (no other file touched)
//
// The Helm chart renders the same sources (copied into charts/proxyscope/files/) from its `monitoring`
// values, filling the same placeholders in templates/prometheusrule.yaml and grafana-dashboard.yaml.
// A build-time script run by a developer, not the agent: it runs the repository's own copy scripts with
// this Node and fixed arguments, as scripts/build-sea.mjs does.
// eslint-disable-next-line no-restricted-imports
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The defaults are what manifests/monitoring's ServiceMonitors produce: the job is the Service name. */
export const DEFAULT_CONFIG = Object.freeze({
  agentSelector: 'job="proxyscope-agent"',
  collectorSelector: 'job="proxyscope-collector"',
  clusterLabel: "cluster",
  multiCluster: false,
  fleetAlerts: false,
});
const FLEET_GROUP = "proxyscope.fleet";

export class MixinConfigError extends Error {
  name = "MixinConfigError";
}

export function mixinConfig(given) {
  const c = { ...DEFAULT_CONFIG, ...given };
  for (const k of Object.keys(c))
    if (!(k in DEFAULT_CONFIG)) throw new MixinConfigError(`unknown mixin config key ${JSON.stringify(k)}`);
  for (const k of ["agentSelector", "collectorSelector"])
    // A selector is the inside of {...}: label matchers, so no braces of its own.
    if (typeof c[k] !== "string" || c[k].trim() === "" || /[{}]/.test(c[k]))
      throw new MixinConfigError(`${k} must be label matchers without braces, e.g. job="proxyscope-agent"`);
  if (typeof c.clusterLabel !== "string" || !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(c.clusterLabel))
    throw new MixinConfigError("clusterLabel must be a Prometheus label name");
  for (const k of ["multiCluster", "fleetAlerts"])
    if (typeof c[k] !== "boolean") throw new MixinConfigError(`${k} must be true or false`);
  return c;
}

function placeholders(c) {
  const l = c.clusterLabel;
  return {
    __AGENT_SELECTOR__: c.agentSelector,
    __COLLECTOR_SELECTOR__: c.collectorSelector,
    // Inside on (...) / by (...): keep the cluster apart when several share one Prometheus.
    __CLUSTER_COMMA__: c.multiCluster ? `${l}, ` : "",
    // After count/sum/max: one answer per cluster rather than one over all of them.
    __BY_CLUSTER__: c.multiCluster ? ` by (${l}) ` : "",
    __CLUSTER_LEGEND__: c.multiCluster ? `{{${l}}}/` : "",
  };
}

const fill = (text, values, escape) =>
  Object.entries(values).reduce((t, [k, v]) => t.replaceAll(k, escape(v)), text);

export function renderRules(source, config) {
  const c = mixinConfig(config);
  let text = fill(source, placeholders(c), (v) => v);
  if (!c.fleetAlerts) {
    // The fleet group counts per-node facts again at fleet level (the collector's report has them too):
    // opt-in, so a node's problem does not page twice.
    const lines = text.split("\n");
    const start = lines.findIndex((x) => x === `  - name: ${FLEET_GROUP}`);
    if (start < 0) throw new MixinConfigError(`mixin/proxyscope-rules.yaml has no group ${FLEET_GROUP}`);
    let end = lines.findIndex((x, i) => i > start && x.startsWith("  - name: "));
    if (end < 0) end = lines.length;
    lines.splice(start, end - start);
    text = lines.join("\n");
  }
  return (
    "# GENERATED from mixin/proxyscope-rules.yaml by scripts/mixin.mjs: edit that, then run the script.\n" +
    text
  );
}

export function renderDashboard(source, config) {
  // The values land inside JSON strings: escape them as JSON does.
  return fill(source, placeholders(mixinConfig(config)), (v) => JSON.stringify(v).slice(1, -1));
}

const SOURCES = { rules: "mixin/proxyscope-rules.yaml", dashboard: "mixin/proxyscope-dashboard.json" };
const OUTPUTS = {
  rules: "manifests/alerts/proxyscope-rules.yaml",
  dashboard: "manifests/grafana/proxyscope-dashboard.json",
};

function render(config) {
  return {
    rules: renderRules(readFileSync(join(root, SOURCES.rules), "utf8"), config),
    dashboard: renderDashboard(readFileSync(join(root, SOURCES.dashboard), "utf8"), config),
  };
}

function main(argv) {
  const arg = (name) => {
    const i = argv.indexOf(name);
    return i < 0 ? undefined : argv[i + 1];
  };
  let config = {};
  try {
    if (arg("--config") !== undefined) config = JSON.parse(arg("--config"));
    const out = render(config);
    const dir = arg("--out");
    if (dir !== undefined) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "proxyscope-rules.yaml"), out.rules);
      writeFileSync(join(dir, "proxyscope-dashboard.json"), out.dashboard);
      return 0;
    }
    const check = argv.includes("--check");
    let stale = 0;
    for (const k of ["rules", "dashboard"]) {
      const path = join(root, OUTPUTS[k]);
      let have = null;
      try {
        have = readFileSync(path, "utf8");
      } catch {
        /* missing counts as out of date */
      }
      if (have === out[k]) continue;
      if (check) {
        process.stderr.write(`${OUTPUTS[k]} is out of date: run node scripts/mixin.mjs\n`);
        stale++;
      } else writeFileSync(path, out[k]);
    }
    // The copies made from these: the PrometheusRule, the dashboard ConfigMap and the chart's sources.
    for (const s of ["sync-prometheusrule.mjs", "dashboard-configmap.mjs", "sync-chart-files.mjs"]) {
      const r = spawnSync(process.execPath, [join(root, "scripts", s), ...(check ? ["--check"] : [])], {
        encoding: "utf8",
        timeout: 60_000,
      });
      process.stderr.write(r.stderr);
      if (r.status !== 0) stale++;
    }
    return stale > 0 ? 1 : 0;
  } catch (e) {
    if (!(e instanceof MixinConfigError || e instanceof SyntaxError)) throw e;
    process.stderr.write(`scripts/mixin.mjs: bad config: ${e.message}\n`);
    return 2;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(main(process.argv.slice(2)));
