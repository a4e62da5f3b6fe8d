import t, { type Test } from "tap";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import {
  METRIC,
  METRIC_STABILITY,
  metricDeprecation,
  metricStability,
} from "../../../agent/metrics/names.js";
import { FLEET_METRICS, fleetMetrics } from "../../../collector/render/fleet-metrics.js";
import { UPDATING } from "../../helpers/golden.js";

// kube-state-metrics' stable-metrics test, for both programs: the golden list names every stable metric
// with its type and label names. A stable metric removed, renamed, retyped or relabelled fails here,
// and UPDATE_GOLDEN=1 does not make that pass (it only adds newly stable metrics): dropping one is a
// breaking change, done by editing the list by hand, as docs/compatibility.md says.

interface Described {
  name: string;
  type: string;
  labels: readonly string[];
}

const line = (m: Described) => `${m.name} ${m.type} ${m.labels.join(",") || "-"}`;

const HEADER =
  "# Stable metrics: name, type, label names. Removing or changing a line is a breaking change (docs/compatibility.md).\n";

/**
 * An info metric (name ending `_info`, value always 1) is read by joining on its labels, never by its
 * series identity, so it may gain a label (docs/compatibility.md): its golden line still holds when every
 * label it names is still there, with the same name and type. Its golden line then names the new set.
 */
function infoGrown(goldenLine: string, stable: readonly Described[]): boolean {
  const [name, type, labels] = goldenLine.split(" ");
  if (name === undefined || !name.endsWith("_info")) return false;
  const m = stable.find((x) => x.name === name);
  const had = labels === "-" || labels === undefined ? [] : labels.split(",");
  return (
    m !== undefined &&
    m.type === type &&
    had.every((l) => m.labels.includes(l)) &&
    m.labels.length > had.length
  );
}

function checkList(t: Test, file: string, stable: readonly Described[]): void {
  const url = new URL(`../../fixtures/golden/metrics/${file}`, import.meta.url);
  if (!existsSync(url) && UPDATING) writeFileSync(url, HEADER);
  if (!existsSync(url)) {
    t.fail(`no test/fixtures/golden/metrics/${file}: run this test with UPDATE_GOLDEN=1 to write it`);
    return;
  }
  const text = readFileSync(url, "utf8");
  const golden = text.split("\n").filter((l) => l !== "" && !l.startsWith("#"));
  const now = new Set(stable.map(line));
  const gone = golden.filter((l) => !now.has(l) && !infoGrown(l, stable));
  t.same(gone, [], `${file}: every stable metric is still exported with its type and label names`);
  const grown = golden.filter((l) => !now.has(l));
  const added = [...now].filter((l) => !golden.includes(l));
  if (UPDATING && gone.length === 0 && added.length > 0) {
    // A grown info metric's line is rewritten in place; a new metric is appended.
    const byName = new Map(added.map((l) => [l.split(" ")[0], l]));
    const kept = text
      .trimEnd()
      .split("\n")
      .map((l) => (grown.includes(l) ? (byName.get(l.split(" ")[0]) ?? l) : l));
    const appended = added.filter((l) => !kept.includes(l));
    writeFileSync(url, `${[...kept, ...appended].join("\n")}\n`);
    return;
  }
  t.same(added, [], `${file}: a newly stable metric is in the list (UPDATE_GOLDEN=1 adds it)`);
}

t.test("the agent's stable metrics", async (t) => {
  const described = await new AgentMetrics({ version: "0.1.0" }).describe();
  t.equal(described.length, Object.keys(METRIC).length, "every metric of the agent is described");
  for (const m of described) t.ok(m.stability !== null, `${m.name} is marked stable or experimental`);
  const stable = described.filter((m) => m.stability === "stable");
  t.ok(stable.length > 20, "the stable metrics were found");
  checkList(t, "agent-stable.txt", stable);
});

t.test("the collector's stable fleet metrics", async (t) => {
  const { registry } = fleetMetrics();
  const types = new Map((await registry.getMetricsAsJSON()).map((m) => [m.name, String(m.type)]));
  const names = Object.keys(FLEET_METRICS) as (keyof typeof FLEET_METRICS)[];
  t.same([...types.keys()], names, "the registry exports exactly the declared fleet metrics");
  const stable = names
    .filter((n) => FLEET_METRICS[n].stability === "stable")
    .map((n) => ({ name: n, type: types.get(n) ?? "absent", labels: FLEET_METRICS[n].labels }));
  t.ok(stable.length > 5, "the stable fleet metrics were found");
  checkList(t, "fleet-stable.txt", stable);
});

t.test("a stability for every agent metric, keyed the same as METRIC", async (t) => {
  t.same(Object.keys(METRIC_STABILITY).sort(), Object.keys(METRIC).sort());
});

t.test("the shipped alerts and dashboards read only stable metrics, none deprecated", async (t) => {
  const files = ["../../../manifests/", "../../../mixin/"].flatMap((d) =>
    readdirSync(new URL(d, import.meta.url), { recursive: true, withFileTypes: true }).filter((e) =>
      e.isFile(),
    ),
  );
  const used = new Set(
    files
      .flatMap((e) => [
        ...readFileSync(`${e.parentPath}/${e.name}`, "utf8").matchAll(/\bproxyscope_[a-z0-9_]*[a-z0-9]\b/g),
      ])
      .map((m) => m[0]),
  );
  t.ok(used.size > 10, "the manifests' metrics were found");
  const fleet = FLEET_METRICS as Record<string, { stability: string }>;
  for (const name of [...used].sort()) {
    const stability = metricStability(name) ?? fleet[name]?.stability ?? null;
    t.equal(stability, "stable", `${name} is a stable metric of the agent or the collector`);
    t.equal(metricDeprecation(name), null, `${name} is not deprecated`);
  }
});
