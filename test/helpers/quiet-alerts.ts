// "No alert fires on a healthy node", asked of promtool itself: a node's real /metrics (as the agent
// renders it for a scan) becomes promtool input series held for 40 minutes, with the scrape's own labels
// and `up`, and every alert in the shipped rule file is evaluated at its end with no alert expected.
// Timestamps move with the clock (a healthy agent scans every minute and kube-proxy syncs), so the
// staleness alerts see a fresh node.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { parsePrometheusText } from "../../agent/parse/prometheus-text.js";
import { RULES_FILE, which } from "../unit/deploy/lib.js";

const MINUTES = 40;

function seriesName(name: string, labels: Record<string, string>): string {
  const body = Object.entries(labels)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(",");
  return `${name}{${body}}`;
}

/** A sample value as promtool's series notation reads it (Go's ParseFloat: NaN, +Inf, -Inf). */
const promValue = (v: number) =>
  Number.isNaN(v) ? "NaN" : v === Infinity ? "+Inf" : v === -Infinity ? "-Inf" : String(v);

/** promtool input series for one scrape of `node`'s agent, held for MINUTES. */
export function scrapeAsSeries(metricsText: string, node: string): { series: string; values: string }[] {
  const expo = parsePrometheusText(metricsText);
  if (!expo.ok) throw new Error(`the agent's /metrics does not parse: ${expo.error}`);
  const target = { instance: `${node}:9977`, job: "proxyscope-agent", node };
  const out = [{ series: seriesName("up", target), values: `1x${MINUTES}` }];
  for (const family of expo.value.values())
    for (const s of family.samples) {
      const values = s.name.endsWith("_timestamp_seconds")
        ? `0+60x${MINUTES}`
        : `${promValue(s.value)}x${MINUTES}`;
      out.push({ series: seriesName(s.name, { ...s.labels, ...target }), values });
    }
  return out;
}

function alertNames(rulesFile: string): string[] {
  const rules = parse(readFileSync(rulesFile, "utf8")) as { groups: { rules: { alert: string }[] }[] };
  return rules.groups.flatMap((g) => g.rules.map((r) => r.alert));
}

/**
 * Runs promtool over the node's scrape and every alert of `rulesFile`, none expected to fire. Returns
 * promtool's output when an alert fired (its report names the alert and labels), null when none did.
 */
export function alertsOnScrape(metricsText: string, node: string, rulesFile = RULES_FILE): string | null {
  const promtool = which("promtool");
  if (promtool === null) throw new Error("promtool is not installed (Debian: prometheus)");
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-quiet-"));
  try {
    const testFile = join(dir, "quiet.yaml");
    const evalTime = `${MINUTES - 1}m`;
    writeFileSync(
      testFile,
      stringify({
        rule_files: [rulesFile],
        evaluation_interval: "1m",
        tests: [
          {
            name: `no alert on ${node}`,
            interval: "1m",
            input_series: scrapeAsSeries(metricsText, node),
            alert_rule_test: alertNames(rulesFile).map((alertname) => ({
              eval_time: evalTime,
              alertname,
              exp_alerts: [],
            })),
          },
        ],
      }),
    );
    const r = spawnSync(promtool, ["test", "rules", testFile], { encoding: "utf8", timeout: 120_000 });
    if (r.error) throw r.error;
    return r.status === 0 ? null : `${r.stdout}${r.stderr}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
