// The Grafana dashboard: valid against Grafana's own published dashboard types (@grafana/schema, checked by
// the TypeScript compiler over the JSON as an object literal), its ConfigMap in step with it, every panel
// query parsed by promtool, and every query answered with data by a real Prometheus scraping two real
// agents: one on an ipvs node (STAND-IN kube-proxy answering ipvs, the IPVS table and traffic totals
// recorded in UML) and one on an nftables node (STAND-IN kube-proxy answering nftables with failing syncs).
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { parse } from "yaml";
import { PROMTOOL, startPrometheus } from "../helpers/prometheus.js";
import { startStandin } from "../helpers/standin.js";
import { REPO_ROOT } from "../helpers/uml.js";
import { agentBuilt, startAgent } from "./agent-process.js";

t.setTimeout(1_200_000);
const DASHBOARD = join(REPO_ROOT, "manifests/grafana/proxyscope-dashboard.json");
const CONFIGMAP = join(REPO_ROOT, "manifests/grafana/dashboard-configmap.yaml");
const text = readFileSync(DASHBOARD, "utf8");
interface Target {
  expr: string;
  refId: string;
}
interface Panel {
  title: string;
  type: string;
  targets?: Target[];
}
const dashboard = JSON.parse(text) as { panels: Panel[] };
const queries = dashboard.panels.flatMap((p) =>
  (p.targets ?? []).map((q) => ({ panel: p.title, refId: q.refId, expr: q.expr })),
);
// Grafana's built-in interval variable, as Grafana would fill it in for a 1 s scrape interval.
const concrete = (expr: string) => expr.replaceAll("$__rate_interval", "1m");

/** The agent ServiceMonitor's relabelings in Prometheus' relabel_configs form. */
function serviceMonitorRelabelings(): Record<string, unknown>[] {
  const sm = parse(readFileSync(join(REPO_ROOT, "manifests/monitoring/servicemonitor.yaml"), "utf8")) as {
    spec: { endpoints: { relabelings: Record<string, unknown>[] }[] };
  };
  const snake: Record<string, string> = {
    sourceLabels: "source_labels",
    targetLabel: "target_label",
    action: "action",
    regex: "regex",
    replacement: "replacement",
    separator: "separator",
  };
  return sm.spec.endpoints[0]!.relabelings.map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => {
        if (!(k in snake)) throw new Error(`relabeling field ${k} has no relabel_configs name here`);
        return [snake[k]!, v];
      }),
    ),
  );
}

function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), "proxyscope-grafana-"));
  t.teardown(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** tsc over `const d: Dashboard = <json>;`: Grafana's types check every field, enum and excess property. */
function typeCheck(json: string): { ok: boolean; output: string } {
  const dir = scratch();
  writeFileSync(
    join(dir, "check.ts"),
    `import type { Dashboard } from "@grafana/schema";\nexport const d: Dashboard = ${json};\n`,
  );
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: "NodeNext",
        moduleResolution: "NodeNext",
        skipLibCheck: true,
        baseUrl: ".",
        paths: { "@grafana/schema": [join(REPO_ROOT, "node_modules/@grafana/schema/dist/types/index.d.ts")] },
        types: [],
      },
      files: ["check.ts"],
    }),
  );
  const r = spawnSync(process.execPath, [join(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], {
    encoding: "utf8",
    timeout: 300_000,
  });
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
}

t.test("the dashboard is a valid Grafana dashboard by Grafana's published types", async (t) => {
  const good = typeCheck(text);
  t.ok(good.ok, good.output);
  // The check bites: a wrong enum value and an unknown field are refused.
  const bad = typeCheck(text.replace('"graphTooltip": 1', '"graphTooltip": "shared"'));
  t.notOk(bad.ok, "a string where Grafana wants its cursor-sync enum");
  const extra = typeCheck(text.replace('"editable": true', '"editable": true, "editible": true'));
  t.notOk(extra.ok, "a misspelt field");
});

t.test("the ConfigMap carries exactly the dashboard, labelled for Grafana's sidecar", async (t) => {
  const cm = parse(readFileSync(CONFIGMAP, "utf8")) as {
    metadata: { labels: Record<string, string> };
    data: Record<string, string>;
  };
  t.equal(cm.data["proxyscope-dashboard.json"], text, "run node scripts/dashboard-configmap.mjs");
  t.equal(cm.metadata.labels.grafana_dashboard, "1");
});

t.test("every panel has a query, and promtool parses every query", async (t) => {
  const empty = dashboard.panels.filter((p) => p.type !== "row" && (p.targets ?? []).length === 0);
  t.same(
    empty.map((p) => p.title),
    [],
  );
  t.ok(queries.length >= 15, `${queries.length} queries`);
  // promtool parses PromQL in rule files: one recording rule per query.
  const dir = scratch();
  const rules = {
    groups: [
      {
        name: "dashboard",
        rules: queries.map((q, i) => ({ record: `dashboard:query_${i}`, expr: concrete(q.expr) })),
      },
    ],
  };
  writeFileSync(join(dir, "rules.json"), JSON.stringify(rules));
  const r = spawnSync(PROMTOOL, ["check", "rules", join(dir, "rules.json")], {
    encoding: "utf8",
    timeout: 120_000,
  });
  t.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  const broken = structuredClone(rules);
  broken.groups[0]!.rules[0]!.expr = "sum by (phase (proxyscope_node_phase)";
  writeFileSync(join(dir, "broken.json"), JSON.stringify(broken));
  const b = spawnSync(PROMTOOL, ["check", "rules", join(dir, "broken.json")], {
    encoding: "utf8",
    timeout: 120_000,
  });
  t.not(b.status, 0, "promtool refuses a broken query (the check bites)");
});

t.test(
  "every panel query returns data from Prometheus scraping real agents",
  { skip: !agentBuilt() && "run npx tsc -p . first" },
  async (t) => {
    const scenario = (name: string) =>
      JSON.parse(
        readFileSync(join(REPO_ROOT, `test/fixtures/kube-proxy/scenarios/${name}.json`), "utf8"),
      ) as object;
    // The ipvs node's /proc: the IPVS table and traffic totals recorded in UML, this machine's kernel release.
    const procRoot = scratch();
    cpSync(join(REPO_ROOT, "test/fixtures/ipvs/stats/traffic/proc"), procRoot, { recursive: true });
    mkdirSync(join(procRoot, "sys/kernel"), { recursive: true });
    cpSync(
      join(REPO_ROOT, "test/fixtures/host/proc/sys/kernel/osrelease"),
      join(procRoot, "sys/kernel/osrelease"),
    );

    const agents: string[] = [];
    const targetLabels: Record<string, Record<string, string>> = {};
    for (const [name, extra] of [
      ["ipvs-v1.31", ["--proc-root", procRoot]],
      ["nftables-failing-v1.37", []],
    ] as const) {
      const kp = await startStandin(scenario(name));
      t.teardown(() => kp.stop());
      const agent = await startAgent({
        args: [
          "--scan-interval-s",
          "2",
          "--kube-proxy-metrics-url",
          kp.metricsUrl,
          "--kube-proxy-health-url",
          kp.healthUrl,
          ...extra,
        ],
      });
      t.teardown(() => agent.stop());
      await agent.scans(1);
      agents.push(`127.0.0.1:${agent.port}`);
      // What Kubernetes service discovery gives the ServiceMonitor's target: the pod's node.
      targetLabels[`127.0.0.1:${agent.port}`] = { __meta_kubernetes_pod_node_name: `node-${name}` };
    }
    // The scrape the shipped ServiceMonitor makes: its own relabellings (the node label), job named after
    // the Service, as the Prometheus Operator would write them.
    const prom = await startPrometheus({
      jobs: [
        {
          job: "proxyscope-agent",
          targets: agents,
          targetLabels,
          relabelConfigs: serviceMonitorRelabelings(),
        },
      ],
    });
    t.teardown(() => prom.stop());
    await prom.waitFor("count(proxyscope_build_info)", (s) => s[0]?.value === 2);
    const nodes = await prom.query("count by (node) (proxyscope_node_info)");
    t.same(
      nodes.map((s) => s.metric.node).sort(),
      ["node-ipvs-v1.31", "node-nftables-failing-v1.37"],
      "every series carries its node, as the ServiceMonitor's relabelling makes it",
    );
    // rate() and increase() need two samples in the window: wait until the slowest query has them.
    await prom.waitFor("count(count_over_time(proxyscope_build_info[1m]) >= 3)", (s) => s[0]?.value === 2);
    const phases = await prom.query("proxyscope_node_phase == 1");
    t.same(phases.map((s) => s.metric.phase).sort(), ["ipvs", "nftables"], "a two-node fleet mid-migration");

    for (const q of queries) {
      const samples = await prom.query(concrete(q.expr));
      t.ok(samples.length > 0, `${q.panel} (${q.refId}): ${q.expr}`);
      // Per-node panels name the node, never a pod address.
      t.notMatch(q.expr, /\binstance\b/, `${q.panel} (${q.refId}) not by instance`);
      if (/\bby \(node\)/.test(q.expr))
        t.ok(
          samples.every((s) => s.metric.node?.startsWith("node-")),
          `${q.panel} (${q.refId}) per node`,
        );
    }
    const reporting = queries.find((q) => q.panel === "Nodes reporting")!;
    t.match(reporting.expr, /^sum\(up\{job="proxyscope-agent"\}\)$/, "Nodes reporting counts scrape targets");
    t.equal((await prom.query(reporting.expr))[0]?.value, 2, "both agents reporting");
    const conns = await prom.query(
      concrete(queries.find((q) => q.expr.includes("proxyscope_ipvs_connections_total"))!.expr),
    );
    t.equal(conns[0]?.value, 0, "the recorded totals do not move, so the drain rate reads 0");
    const versions = await prom.query("count by (kube_proxy_version) (proxyscope_node_info)");
    t.same(versions.map((s) => s.metric.kube_proxy_version).sort(), ["v1.31.4", "v1.37.0"]);
  },
);
