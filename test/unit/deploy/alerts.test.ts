// The alert rules: promtool accepts them, each alert fires on a series history that should fire it and
// stays silent on one that should not (promtool test rules), the PrometheusRule carries the same groups,
// every metric name is one the agent or kube-proxy really exports, and the dashboard panel that counts
// the same failures agrees with its alert.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import t from "tap";
import { parse, stringify } from "yaml";
import { MANIFESTS, ROOT, RULES_FILE, manifestObjects, walkYaml, which } from "./lib.js";

type Rule = {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
};
type Rules = { groups: { name: string; rules: Rule[] }[] };
const rulesText = readFileSync(RULES_FILE, "utf8");
const rules = parse(rulesText) as Rules;
const alerts = rules.groups.flatMap((g) => g.rules);
const byName = new Map(alerts.map((r) => [r.alert, r]));
// Every alert, the opt-in fleet group too (scripts/mixin.mjs renders it), for the checks over each alert.
const fullDir = mkdtempSync(join(tmpdir(), "proxyscope-rules-full-"));
t.teardown(() => rmSync(fullDir, { recursive: true, force: true }));
spawnSync(process.execPath, [
  join(ROOT, "scripts/mixin.mjs"),
  "--config",
  '{"fleetAlerts":true}',
  "--out",
  fullDir,
]);
const allAlerts = (
  parse(readFileSync(join(fullDir, "proxyscope-rules.yaml"), "utf8")) as Rules
).groups.flatMap((g) => g.rules);

// The agent's metric names, as the agent's /metrics exports them.
const AGENT_METRICS = [
  "proxyscope_node_phase",
  "proxyscope_node_verdict",
  "proxyscope_kernel_nftables_capable",
  "proxyscope_ipvs_virtual_servers",
  "proxyscope_kube_ipvs0_present",
  "proxyscope_kube_ipvs0_addresses",
  "proxyscope_black_holed_addresses",
  "proxyscope_kube_proxy_last_sync_timestamp_seconds",
  "proxyscope_kube_proxy_sync_failures_total",
  "proxyscope_kube_proxy_cleanup_failures_total",
  "proxyscope_finding",
  "proxyscope_probe_success",
  "proxyscope_last_scan_timestamp_seconds",
  // The collector's (collector/render/fleet-metrics.ts).
  "proxyscope_fleet_last_gather_success",
];
// kube-proxy's own, as defined in kubernetes/kubernetes pkg/proxy/metrics/metrics.go (subsystem "kubeproxy"):
// NFTablesSyncFailuresTotal, NFTablesCleanupFailuresTotal, IPTablesRestoreFailuresTotal,
// SyncProxyRulesLastTimestamp.
const KUBE_PROXY_METRICS = [
  "kubeproxy_sync_proxy_rules_nftables_sync_failures_total",
  "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total",
  "kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
  "kubeproxy_sync_proxy_rules_last_timestamp_seconds",
];

const KP = 'instance="10.0.0.1:10249",job="kube-proxy"';
const AG = 'instance="10.0.0.1:9977",job="proxyscope-agent",node="n1"';
const CO = 'instance="10.0.0.9:8080",job="proxyscope-collector"';
const coLabels = { instance: "10.0.0.9:8080", job: "proxyscope-collector" };
const kpLabels = { instance: "10.0.0.1:10249", job: "kube-proxy" };
const agLabels = { instance: "10.0.0.1:9977", job: "proxyscope-agent", node: "n1" };

type Case = {
  alert: string;
  why: string;
  interval?: string;
  series: [string, string][];
  at: string;
  fires: Record<string, string>[];
  /** The alert's value, for annotations that print {{ $value }} (the fleet counts). */
  value?: string;
};
const counterCases = (
  alert: string,
  metric: string,
  labels: string,
  exp: Record<string, string>,
  at: string,
): Case[] => [
  {
    alert,
    why: "rising on both families",
    series: [
      [`${metric}{${labels},ip_family="IPv4"}`, "0+1x40"],
      [`${metric}{${labels},ip_family="IPv6"}`, "0+1x40"],
    ],
    at,
    fires: [exp],
  },
  {
    alert,
    why: "old failures, flat now",
    series: [[`${metric}{${labels},ip_family="IPv4"}`, "7x40"]],
    at,
    fires: [],
  },
  {
    alert,
    why: "one failure, then recovered (shorter than for)",
    series: [[`${metric}{${labels},ip_family="IPv4"}`, "0x3 1x37"]],
    at,
    fires: [],
  },
];

const CASES: Case[] = [
  ...counterCases(
    "KubeProxyNftablesSyncFailing",
    "kubeproxy_sync_proxy_rules_nftables_sync_failures_total",
    KP,
    kpLabels,
    "20m",
  ),
  ...counterCases(
    "KubeProxyIptablesRestoreFailing",
    "kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
    KP,
    kpLabels,
    "20m",
  ),
  ...counterCases(
    "KubeProxyNftablesCleanupFailing",
    "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total",
    KP,
    kpLabels,
    "25m",
  ),
  {
    alert: "KubeProxyRulesStale",
    why: "last successful sync stuck at 1m",
    series: [[`kubeproxy_sync_proxy_rules_last_timestamp_seconds{${KP},ip_family="IPv4"}`, "60x30"]],
    at: "15m",
    fires: [kpLabels],
  },
  {
    alert: "KubeProxyRulesStale",
    why: "syncing every minute",
    series: [[`kubeproxy_sync_proxy_rules_last_timestamp_seconds{${KP},ip_family="IPv4"}`, "0+60x30"]],
    at: "15m",
    fires: [],
  },
  {
    alert: "ProxyscopeKubeProxySyncFailing",
    why: "counter the agent reads keeps rising",
    series: [[`proxyscope_kube_proxy_sync_failures_total{${AG}}`, "0+1x30"]],
    at: "20m",
    fires: [agLabels],
  },
  {
    alert: "ProxyscopeKubeProxySyncFailing",
    why: "old failures, flat now",
    series: [[`proxyscope_kube_proxy_sync_failures_total{${AG}}`, "5x30"]],
    at: "20m",
    fires: [],
  },
  {
    alert: "ProxyscopeKubeProxyCleanupFailing",
    why: "rising",
    series: [[`proxyscope_kube_proxy_cleanup_failures_total{${AG}}`, "0+1x30"]],
    at: "25m",
    fires: [agLabels],
  },
  {
    alert: "ProxyscopeKubeProxyCleanupFailing",
    why: "flat",
    series: [[`proxyscope_kube_proxy_cleanup_failures_total{${AG}}`, "2x30"]],
    at: "25m",
    fires: [],
  },
  {
    alert: "ProxyscopeKubeProxyRulesStale",
    why: "last sync at the epoch's start, never again",
    series: [[`proxyscope_kube_proxy_last_sync_timestamp_seconds{${AG}}`, "0x30"]],
    at: "15m",
    fires: [agLabels],
  },
  {
    alert: "ProxyscopeKubeProxyRulesStale",
    why: "syncing every minute",
    series: [[`proxyscope_kube_proxy_last_sync_timestamp_seconds{${AG}}`, "0+60x30"]],
    at: "15m",
    fires: [],
  },
  {
    alert: "ProxyscopeKubeIpvs0LeftInNftablesMode",
    why: "kube-ipvs0 on a node in nftables mode",
    series: [
      [`proxyscope_kube_ipvs0_present{${AG}}`, "1x30"],
      [`proxyscope_node_phase{${AG},phase="nftables"}`, "1x30"],
      [`proxyscope_node_phase{${AG},phase="ipvs"}`, "0x30"],
    ],
    at: "20m",
    fires: [agLabels],
  },
  {
    alert: "ProxyscopeKubeIpvs0LeftInNftablesMode",
    why: "kube-ipvs0 belongs there: the node is in ipvs mode; and another node in nftables mode has none",
    series: [
      [`proxyscope_kube_ipvs0_present{${AG}}`, "1x30"],
      [`proxyscope_node_phase{${AG},phase="nftables"}`, "0x30"],
      [`proxyscope_node_phase{${AG},phase="ipvs"}`, "1x30"],
      ['proxyscope_kube_ipvs0_present{instance="10.0.0.2:9977",job="proxyscope-agent",node="n2"}', "0x30"],
      [
        'proxyscope_node_phase{instance="10.0.0.2:9977",job="proxyscope-agent",node="n2",phase="nftables"}',
        "1x30",
      ],
    ],
    at: "20m",
    fires: [],
  },
  {
    alert: "ProxyscopeBlackHoledAddresses",
    why: "three addresses",
    series: [[`proxyscope_black_holed_addresses{${AG}}`, "3x30"]],
    at: "10m",
    fires: [agLabels],
  },
  {
    alert: "ProxyscopeBlackHoledAddresses",
    why: "none",
    series: [[`proxyscope_black_holed_addresses{${AG}}`, "0x30"]],
    at: "10m",
    fires: [],
  },
  {
    alert: "ProxyscopeNodesStillInIpvsMode",
    why: "three nodes in ipvs mode for 10 hours, one migrated: one alert with the count",
    interval: "4m",
    series: [
      [`proxyscope_node_phase{${AG},phase="ipvs"}`, "1x150"],
      [
        'proxyscope_node_phase{instance="10.0.0.2:9977",job="proxyscope-agent",node="n2",phase="ipvs"}',
        "1x150",
      ],
      [
        'proxyscope_node_phase{instance="10.0.0.3:9977",job="proxyscope-agent",node="n3",phase="ipvs"}',
        "1x150",
      ],
      [
        'proxyscope_node_phase{instance="10.0.0.4:9977",job="proxyscope-agent",node="n4",phase="ipvs"}',
        "0x150",
      ],
    ],
    at: "7h",
    fires: [{}],
    value: "3",
  },
  {
    alert: "ProxyscopeNodesStillInIpvsMode",
    why: "every node migrated to nftables",
    interval: "4m",
    series: [
      [`proxyscope_node_phase{${AG},phase="ipvs"}`, "0x150"],
      [`proxyscope_node_phase{${AG},phase="nftables"}`, "1x150"],
    ],
    at: "7h",
    fires: [],
  },
  {
    alert: "ProxyscopeNodesStillInIpvsMode",
    why: "ipvs for 5 hours only (shorter than for)",
    interval: "4m",
    series: [[`proxyscope_node_phase{${AG},phase="ipvs"}`, "1x75"]],
    at: "5h",
    fires: [],
  },
  {
    alert: "ProxyscopeKernelsCannotRunNftables",
    why: "two kernels not capable, one capable: one alert with the count",
    series: [
      [`proxyscope_kernel_nftables_capable{${AG}}`, "0x120"],
      [
        'proxyscope_kernel_nftables_capable{instance="10.0.0.2:9977",job="proxyscope-agent",node="n2"}',
        "0x120",
      ],
      [
        'proxyscope_kernel_nftables_capable{instance="10.0.0.3:9977",job="proxyscope-agent",node="n3"}',
        "1x120",
      ],
    ],
    at: "90m",
    fires: [{}],
    value: "2",
  },
  {
    alert: "ProxyscopeKernelsCannotRunNftables",
    why: "every kernel capable",
    series: [[`proxyscope_kernel_nftables_capable{${AG}}`, "1x120"]],
    at: "90m",
    fires: [],
  },
  {
    alert: "ProxyscopeCriticalFinding",
    why: "nftables-table-missing, a critical finding no other alert covers",
    series: [
      [`proxyscope_finding{${AG},id="nftables-table-missing",severity="critical"}`, "1x30"],
      [`proxyscope_finding{${AG},id="kube-proxy-unhealthy",severity="error"}`, "1x30"],
    ],
    at: "20m",
    fires: [{ ...agLabels, id: "nftables-table-missing", severity: "critical" }],
  },
  {
    alert: "ProxyscopeCriticalFinding",
    why: "critical findings with alerts of their own, and a resolved one",
    series: [
      [`proxyscope_finding{${AG},id="kube-ipvs0-black-hole",severity="critical"}`, "1x30"],
      [`proxyscope_finding{${AG},id="kube-proxy-sync-failing",severity="critical"}`, "1x30"],
      [`proxyscope_finding{${AG},id="kube-proxy-rules-stale",severity="critical"}`, "1x30"],
      [`proxyscope_finding{${AG},id="ipvs-mode-deprecated",severity="critical"}`, "1x30"],
      [`proxyscope_finding{${AG},id="nftables-table-missing",severity="critical"}`, "0x30"],
    ],
    at: "20m",
    fires: [],
  },
  {
    alert: "ProxyscopeAgentDown",
    why: "agent target down",
    series: [[`up{${AG}}`, "0x30"]],
    at: "15m",
    fires: [agLabels],
  },
  {
    alert: "ProxyscopeAgentDown",
    why: "agent up; another job down is not ours",
    series: [
      [`up{${AG}}`, "1x30"],
      [`up{${KP}}`, "0x30"],
    ],
    at: "15m",
    fires: [],
  },
  {
    alert: "ProxyscopeAgentAbsent",
    why: "no agent target at all",
    series: [[`up{${KP}}`, "1x30"]],
    at: "20m",
    fires: [{ job: "proxyscope-agent" }],
  },
  {
    alert: "ProxyscopeAgentAbsent",
    why: "agent scraped",
    series: [[`up{${AG}}`, "1x30"]],
    at: "20m",
    fires: [],
  },
  {
    alert: "ProxyscopeProbeFailing",
    why: "nftables probe failing",
    series: [
      [`proxyscope_probe_success{${AG},probe="nftables"}`, "0x30"],
      [`proxyscope_probe_success{${AG},probe="ipvs"}`, "1x30"],
    ],
    at: "20m",
    fires: [{ ...agLabels, probe: "nftables" }],
  },
  {
    alert: "ProxyscopeProbeFailing",
    why: "kube-proxy-free node: its kube-proxy probes fail by design, every other probe reads",
    series: [
      [`proxyscope_probe_success{${AG},probe="kube-proxy-mode"}`, "0x30"],
      [`proxyscope_probe_success{${AG},probe="kube-proxy-metrics"}`, "0x30"],
      [`proxyscope_probe_success{${AG},probe="nftables"}`, "1x30"],
      [`proxyscope_node_phase{${AG},phase="none"}`, "1x30"],
      [`proxyscope_node_phase{${AG},phase="ipvs"}`, "0x30"],
    ],
    at: "20m",
    fires: [],
  },
  {
    alert: "ProxyscopeProbeFailing",
    why: "kube-proxy-free node: a kernel probe failing still alerts",
    series: [
      [`proxyscope_probe_success{${AG},probe="kube-proxy-mode"}`, "0x30"],
      [`proxyscope_probe_success{${AG},probe="sysctls"}`, "0x30"],
      [`proxyscope_node_phase{${AG},phase="none"}`, "1x30"],
    ],
    at: "20m",
    fires: [{ ...agLabels, probe: "sysctls" }],
  },
  {
    alert: "ProxyscopeProbeFailing",
    why: "kube-proxy stopped answering on a node whose ipvs state stays",
    series: [
      [`proxyscope_probe_success{${AG},probe="kube-proxy-mode"}`, "0x30"],
      [`proxyscope_node_phase{${AG},phase="none"}`, "0x30"],
      [`proxyscope_node_phase{${AG},phase="ipvs"}`, "1x30"],
    ],
    at: "20m",
    fires: [{ ...agLabels, probe: "kube-proxy-mode" }],
  },
  {
    alert: "ProxyscopeProbeFailing",
    why: "all probes fine",
    series: [[`proxyscope_probe_success{${AG},probe="nftables"}`, "1x30"]],
    at: "20m",
    fires: [],
  },
  {
    alert: "ProxyscopeFleetGatherFailing",
    why: "every gather failing",
    series: [[`proxyscope_fleet_last_gather_success{${CO}}`, "0x30"]],
    at: "20m",
    fires: [coLabels],
  },
  {
    alert: "ProxyscopeFleetGatherFailing",
    why: "one gather failed, the next succeeded",
    series: [[`proxyscope_fleet_last_gather_success{${CO}}`, "1 1 1 1 1 0 0 0 0 0 1x20"]],
    at: "20m",
    fires: [],
  },
  {
    alert: "ProxyscopeScanStale",
    why: "last scan stuck at 1m",
    series: [[`proxyscope_last_scan_timestamp_seconds{${AG}}`, "60x30"]],
    at: "20m",
    fires: [agLabels],
  },
  {
    alert: "ProxyscopeScanStale",
    why: "scanning every minute",
    series: [[`proxyscope_last_scan_timestamp_seconds{${AG}}`, "0+60x30"]],
    at: "20m",
    fires: [],
  },
];

// Expected annotations: the rule's text with {{ $labels.X }} filled in; promtool renders the real templates.
function expectedAnnotations(
  rule: Rule,
  labels: Record<string, string>,
  value: string | undefined,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(rule.annotations).map(([k, v]) => [
      k,
      v
        .replace(/\{\{ \$labels\.([a-zA-Z_]+) \}\}/g, (_, l: string) => {
          if (!(l in labels)) throw new Error(`${rule.alert}.${k} uses $labels.${l}, absent from the alert`);
          return labels[l]!;
        })
        .replace(/\{\{ \$value \}\}/g, () => {
          if (value === undefined) throw new Error(`${rule.alert}.${k} prints $value: give the case a value`);
          return value;
        }),
    ]),
  );
}

function promtoolTestFile(rulesPath: string, cases: Case[] = CASES, rulesByName = byName): string {
  return stringify({
    rule_files: [rulesPath],
    evaluation_interval: "1m",
    // Cases of a group the config leaves out (the opt-in fleet alerts) have no rule to test.
    tests: cases
      .filter((c) => rulesByName.has(c.alert) || !FLEET_ALERTS.includes(c.alert))
      .map((c) => {
        const rule = rulesByName.get(c.alert);
        if (rule === undefined) throw new Error(`no alert ${c.alert}`);
        return {
          name: `${c.alert}: ${c.why}`,
          interval: c.interval ?? "1m",
          input_series: c.series.map(([series, values]) => ({ series, values })),
          alert_rule_test: [
            {
              eval_time: c.at,
              alertname: c.alert,
              exp_alerts: c.fires.map((l) => {
                const labels = { ...l, ...rule.labels };
                return {
                  exp_labels: labels,
                  exp_annotations: expectedAnnotations(rule, { ...labels, alertname: c.alert }, c.value),
                };
              }),
            },
          ],
        };
      }),
  });
}

const FLEET_ALERTS = ["ProxyscopeNodesStillInIpvsMode", "ProxyscopeKernelsCannotRunNftables"];

const promtool = which("promtool");
const dir = mkdtempSync(join(tmpdir(), "proxyscope-rules-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const run = (args: string[]) => spawnSync(promtool!, args, { encoding: "utf8", timeout: 120_000 });

t.test(
  "promtool check rules",
  { skip: promtool === null && "promtool not installed (Debian: prometheus)" },
  async (t) => {
    const r = run(["check", "rules", RULES_FILE]);
    t.equal(r.status, 0, r.stdout + r.stderr);
    t.match(r.stdout, `SUCCESS: ${alerts.length} rules found`);
  },
);

t.test("every alert has a history that fires it and one that must not", async (t) => {
  for (const a of alerts) {
    t.ok(
      CASES.some((c) => c.alert === a.alert && c.fires.length > 0),
      `${a.alert} has a firing case`,
    );
    t.ok(
      CASES.some((c) => c.alert === a.alert && c.fires.length === 0),
      `${a.alert} has a silent case`,
    );
  }
});

t.test(
  "promtool test rules: every case",
  { skip: promtool === null && "promtool not installed" },
  async (t) => {
    const testFile = join(dir, "tests.yaml");
    writeFileSync(testFile, promtoolTestFile(RULES_FILE));
    const r = run(["test", "rules", testFile]);
    t.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    t.match(r.stdout, /SUCCESS/);
  },
);

t.test(
  "the same cases fail against a broken rule (the tests bite)",
  { skip: promtool === null && "promtool not installed" },
  async (t) => {
    const broken = rulesText.replace(
      'expr: proxyscope_black_holed_addresses{job="proxyscope-agent"} > 0',
      'expr: proxyscope_black_holed_addresses{job="proxyscope-agent"} > 5',
    );
    t.not(broken, rulesText, "mutation applied");
    const brokenRules = join(dir, "broken-rules.yaml");
    writeFileSync(brokenRules, broken);
    const testFile = join(dir, "tests-broken.yaml");
    writeFileSync(testFile, promtoolTestFile(brokenRules));
    const r = run(["test", "rules", testFile]);
    t.not(r.status, 0, "promtool reports the missing alert");
    t.match(`${r.stdout}${r.stderr}`, /ProxyscopeBlackHoledAddresses/);
  },
);

// The dashboard's "Failed probes" panel and ProxyscopeProbeFailing say which probe failures count: the
// two expressions are written apart, so promtool evaluates both over nodes of every kind (kube-proxy-free
// with a kernel probe failing too, kube-proxy gone on an ipvs node, a healthy nftables node) and any
// (probe) one counts and the other does not, or counts differently, is a disagreement.
const DASHBOARD_FILE = join(MANIFESTS, "grafana/proxyscope-dashboard.json");
const failedProbesPanel = (dashboardText: string): string => {
  const d = JSON.parse(dashboardText) as { panels: { title: string; targets?: { expr: string }[] }[] };
  const targets = d.panels.find((p) => p.title === "Failed probes")?.targets ?? [];
  if (targets.length !== 1) throw new Error(`the "Failed probes" panel has ${targets.length} queries, not 1`);
  return targets[0]!.expr;
};

function agreementFile(panelExpr: string): string {
  const alertExpr = byName.get("ProxyscopeProbeFailing")!.expr;
  const ag = (n: string) => `instance="10.0.0.${n}:9977",job="proxyscope-agent",node="n${n}"`;
  const probe = (n: string, p: string, v: number): [string, string] => [
    `proxyscope_probe_success{${ag(n)},probe="${p}"}`,
    `${v}x10`,
  ];
  const phase = (n: string, on: string) =>
    ["ipvs", "nftables", "none"].map((p): [string, string] => [
      `proxyscope_node_phase{${ag(n)},phase="${p}"}`,
      `${p === on ? 1 : 0}x10`,
    ]);
  const series: [string, string][] = [
    // kube-proxy-free: its kube-proxy probes fail by design, a kernel probe fails for real.
    ...phase("1", "none"),
    probe("1", "kube-proxy-mode", 0),
    probe("1", "kube-proxy-health", 0),
    probe("1", "sysctls", 0),
    probe("1", "nftables", 1),
    // kube-proxy gone while its ipvs state stays.
    ...phase("2", "ipvs"),
    probe("2", "kube-proxy-mode", 0),
    probe("2", "kube-proxy-health", 1),
    probe("2", "ipvs", 1),
    // Healthy.
    ...phase("3", "nftables"),
    probe("3", "kube-proxy-mode", 1),
    probe("3", "sysctls", 1),
  ];
  const alerting = `count by (probe) (${alertExpr})`;
  const panel = `(${panelExpr})`;
  const empty = (expr: string) => ({ expr, eval_time: "5m", exp_samples: [] });
  return stringify({
    rule_files: [],
    evaluation_interval: "1m",
    tests: [
      {
        name: "Failed probes panel vs ProxyscopeProbeFailing",
        interval: "1m",
        input_series: series.map(([s, values]) => ({ series: s, values })),
        promql_expr_test: [
          // Not vacuous: the alert counts the kernel probe on the kube-proxy-free node and kube-proxy on
          // the ipvs node.
          {
            expr: alerting,
            eval_time: "5m",
            exp_samples: [
              { labels: '{probe="kube-proxy-mode"}', value: 1 },
              { labels: '{probe="sysctls"}', value: 1 },
            ],
          },
          empty(`${alerting} unless on (probe) (${panel} > 0)`),
          empty(`(${panel} > 0) unless on (probe) ${alerting}`),
          empty(`${alerting} != on (probe) ${panel}`),
        ],
      },
    ],
  });
}

t.test(
  "the dashboard's Failed probes panel counts exactly what ProxyscopeProbeFailing alerts on",
  { skip: promtool === null && "promtool not installed" },
  async (t) => {
    const panel = failedProbesPanel(readFileSync(DASHBOARD_FILE, "utf8"));
    const testFile = join(dir, "panel-agrees.yaml");
    writeFileSync(testFile, agreementFile(panel));
    const r = run(["test", "rules", testFile]);
    t.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    // The check bites: the panel as it was before the kube-proxy-free exception counts kube-proxy's probes
    // on the kube-proxy-free node, which the alert leaves out.
    writeFileSync(testFile, agreementFile("sum by (probe) (1 - proxyscope_probe_success)"));
    const broken = run(["test", "rules", testFile]);
    t.not(broken.status, 0, "a panel without the exception disagrees");
    t.match(`${broken.stdout}${broken.stderr}`, /kube-proxy-health/);
  },
);

t.test("each alert reads well and names real metrics", async (t) => {
  for (const a of allAlerts) {
    t.ok(["critical", "warning", "info"].includes(a.labels?.severity ?? ""), `${a.alert} severity`);
    for (const k of ["summary", "description"])
      t.ok((a.annotations?.[k] ?? "").length > 20, `${a.alert} ${k}`);
    for (const m of a.expr.match(/\b(proxyscope|kubeproxy)_[a-z0-9_]+/g) ?? []) {
      t.ok([...AGENT_METRICS, ...KUBE_PROXY_METRICS].includes(m), `${a.alert}: ${m} is a known metric`);
    }
  }
  const required = [
    "rate(kubeproxy_sync_proxy_rules_nftables_sync_failures_total[5m])",
    "rate(kubeproxy_sync_proxy_rules_iptables_restore_failures_total[5m])",
    "rate(kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total[5m])",
    "time() - max without (ip_family) (kubeproxy_sync_proxy_rules_last_timestamp_seconds) > 300",
    'time() - proxyscope_kube_proxy_last_sync_timestamp_seconds{job="proxyscope-agent"} > 300',
    'proxyscope_kube_ipvs0_present{job="proxyscope-agent"} == 1 and on (node) proxyscope_node_phase{job="proxyscope-agent",phase="nftables"} == 1',
    'proxyscope_black_holed_addresses{job="proxyscope-agent"} > 0',
    'count(proxyscope_node_phase{job="proxyscope-agent",phase="ipvs"} == 1) > 0',
    'count(proxyscope_kernel_nftables_capable{job="proxyscope-agent"} == 0) > 0',
    'proxyscope_finding{job="proxyscope-agent",severity="critical",',
    'proxyscope_probe_success{job="proxyscope-agent"} == 0',
  ];
  for (const r of required)
    t.ok(
      allAlerts.some((a) => a.expr.includes(r)),
      `an alert on ${r}`,
    );
});

t.test("up{job=...} matches the job the ServiceMonitor produces", async (t) => {
  const objs = manifestObjects().map((x) => x.obj);
  const sm = objs.find((o) => o.kind === "ServiceMonitor" && o.metadata.name === "proxyscope-agent")!;
  t.notOk(sm.spec.jobLabel, "no jobLabel: the Operator uses the Service name as job");
  const svc = objs.find(
    (o) =>
      o.kind === "Service" &&
      Object.entries(sm.spec.selector.matchLabels).every(([k, v]) => o.metadata.labels?.[k] === v),
  )!;
  const jobs = [...rulesText.matchAll(/up\{job="([^"]+)"\}/g)].map((m) => m[1]);
  t.ok(jobs.length >= 2, "up and absent(up) rules");
  for (const j of jobs) t.equal(j, svc.metadata.name);
});

t.test("the PrometheusRule carries exactly the rule file's groups", async (t) => {
  const pr = manifestObjects().find((x) => x.obj.kind === "PrometheusRule")!.obj;
  t.same(pr.spec.groups, rules.groups);
  const r = spawnSync(process.execPath, [join(ROOT, "scripts/sync-prometheusrule.mjs"), "--check"], {
    encoding: "utf8",
  });
  t.equal(r.status, 0, r.stderr);
  t.equal(pr.metadata.namespace, "proxyscope");
  t.ok(
    readFileSync(join(MANIFESTS, "monitoring/kustomization.yaml"), "utf8").includes("prometheusrule.yaml"),
  );
});

const RUNBOOKS = join(ROOT, "docs/runbooks");
const { homepage, version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  homepage: string;
  version: string;
};

t.test("every alert links its own runbook, and every runbook belongs to an alert", async (t) => {
  for (const a of allAlerts) {
    t.same(
      Object.keys(a.annotations).sort(),
      ["description", "runbook_url", "summary"],
      `${a.alert} annotations`,
    );
    t.equal(
      a.annotations.runbook_url,
      `${homepage}/blob/v${version}/docs/runbooks/${a.alert}.md`,
      `${a.alert} runbook_url`,
    );
    const file = join(RUNBOOKS, `${a.alert}.md`);
    t.ok(existsSync(file), `docs/runbooks/${a.alert}.md exists`);
    if (!existsSync(file)) continue;
    const md = readFileSync(file, "utf8");
    t.match(md, new RegExp(`^# ${a.alert}\\n`), `${a.alert}: titled with the alert's name`);
    for (const section of ["## What it means", "## Confirm it", "## Fix it"])
      t.match(md, new RegExp(`^${section}$`, "m"), `${a.alert}: ${section}`);
    t.match(md, /^curl /m, `${a.alert}: a curl command to confirm it`);
    t.match(md, new RegExp(`severity: ${a.labels.severity}\\b`), `${a.alert}: states its severity`);
  }
  const names = new Set(allAlerts.map((a) => a.alert));
  for (const f of readdirSync(RUNBOOKS).filter((f) => f.endsWith(".md") && f !== "README.md"))
    t.ok(names.has(f.replace(/\.md$/, "")), `docs/runbooks/${f} belongs to an alert`);
});

t.test("no internal work item is named in an annotation, a manifest comment or a runbook", async (t) => {
  const internal = /\b(issue|issues|ticket|TODO|FIXME|XXX|work item)\b|(^|[\s(])#\d+\b/i;
  for (const a of allAlerts)
    for (const [k, v] of Object.entries(a.annotations)) t.notMatch(v, internal, `${a.alert}.${k}`);
  const files = [...walkYaml(MANIFESTS), ...readdirSync(RUNBOOKS).map((f) => join(RUNBOOKS, f))];
  for (const f of files) {
    const text = readFileSync(f, "utf8");
    const lines = f.endsWith(".md") ? text.split("\n") : text.split("\n").filter((l) => /^\s*#/.test(l));
    const hits = lines.filter((l) => internal.test(l));
    t.same(hits, [], relative(ROOT, f));
  }
});

// The mixin: scripts/mixin.mjs renders the rules and the dashboard from mixin/ with a config. A user's
// selector and cluster label must reach every expression over the agent's and collector's series, and
// the same cases must hold on series carrying them (a cluster label and another job name).
const MIXIN = join(ROOT, "scripts/mixin.mjs");
const CUSTOM = {
  agentSelector: 'job="my-agent"',
  collectorSelector: 'job="my-collector"',
  clusterLabel: "k8s_cluster",
  multiCluster: true,
  fleetAlerts: true,
};
function renderMixin(config: object, out: string): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [MIXIN, "--config", JSON.stringify(config), "--out", out], {
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}
// A case rewritten for CUSTOM: the jobs renamed, every series in cluster c1, and every alert keeping
// that label, except absent(), whose labels come only from its selector's equality matchers.
const customLabels = (l: string) =>
  `k8s_cluster="c1",${l.replace('job="proxyscope-agent"', 'job="my-agent"').replace('job="proxyscope-collector"', 'job="my-collector"')}`;
const customCase = (c: Case): Case => ({
  ...c,
  series: c.series.map(([s, v]) => [s.replace(/\{(.*)\}/, (_, l: string) => `{${customLabels(l)}}`), v]),
  fires: c.fires.map((f) => {
    const job =
      { "proxyscope-agent": "my-agent", "proxyscope-collector": "my-collector" }[f.job ?? ""] ?? f.job;
    const g = job === undefined ? { ...f } : { ...f, job };
    return c.alert === "ProxyscopeAgentAbsent" ? g : { ...g, k8s_cluster: "c1" };
  }),
});

t.test("the generated rules and dashboard are up to date with mixin/", async (t) => {
  const r = spawnSync(process.execPath, [MIXIN, "--check"], { encoding: "utf8", timeout: 120_000 });
  t.equal(r.status, 0, `scripts/mixin.mjs --check: ${r.stdout}${r.stderr}`);
});

t.test("the default config leaves out the fleet group; fleetAlerts brings it back", async (t) => {
  t.notOk(
    rules.groups.some((g) => g.name === "proxyscope.fleet"),
    "no fleet group by default",
  );
  const out = join(dir, "fleet");
  const r = renderMixin({ fleetAlerts: true }, out);
  t.equal(r.status, 0, r.output);
  const withFleet = parse(readFileSync(join(out, "proxyscope-rules.yaml"), "utf8")) as Rules;
  t.ok(withFleet.groups.some((g) => g.name === "proxyscope.fleet"));
});

t.test(
  "a custom selector and cluster label: every expression carries them and every case still holds",
  { skip: promtool === null && "promtool not installed" },
  async (t) => {
    const out = join(dir, "custom");
    const r = renderMixin(CUSTOM, out);
    t.equal(r.status, 0, r.output);
    const customText = readFileSync(join(out, "proxyscope-rules.yaml"), "utf8");
    const custom = parse(customText) as Rules;
    const customAlerts = custom.groups.flatMap((g) => g.rules);
    t.equal(customAlerts.length, alerts.length + FLEET_ALERTS.length, "every alert, the fleet ones too");
    for (const a of customAlerts) {
      // Every selector over proxyscope's series (and up) names the job and is aggregated or joined
      // per cluster.
      for (const m of a.expr.matchAll(/\b(proxyscope_[a-z0-9_]+|up)\b(\{[^}]*\})?/g)) {
        const want = m[1]!.startsWith("proxyscope_fleet_") ? 'job="my-collector"' : 'job="my-agent"';
        t.ok(m[2]?.includes(want), `${a.alert}: ${m[0]} carries ${want}`);
      }
      for (const m of a.expr.matchAll(/\b(on|by) \(([^)]*)\)/g))
        t.match(m[2], /^k8s_cluster\b/, `${a.alert}: ${m[0]} keeps the cluster`);
      t.notMatch(a.expr, /\b(count|sum|max)\(/, `${a.alert}: no aggregation across clusters`);
    }
    const check = run(["check", "rules", join(out, "proxyscope-rules.yaml")]);
    t.equal(check.status, 0, check.stdout + check.stderr);
    const testFile = join(dir, "tests-custom.yaml");
    writeFileSync(
      testFile,
      promtoolTestFile(
        join(out, "proxyscope-rules.yaml"),
        CASES.map(customCase),
        new Map(customAlerts.map((a) => [a.alert, a])),
      ),
    );
    const tr = run(["test", "rules", testFile]);
    t.equal(tr.status, 0, `${tr.stdout}${tr.stderr}`);
    // The dashboard under the same config: every query parses and reads only the agent's and collector's
    // series by the user's selector, per cluster.
    const dash = JSON.parse(readFileSync(join(out, "proxyscope-dashboard.json"), "utf8")) as {
      panels: { title: string; targets?: { expr: string; legendFormat?: string }[] }[];
    };
    const exprs = dash.panels.flatMap((p) => (p.targets ?? []).map((q) => ({ title: p.title, ...q })));
    for (const q of exprs) {
      for (const m of q.expr.matchAll(/\b(proxyscope_[a-z0-9_]+|up)\b(\{[^}]*\})?/g)) {
        const want = m[1]!.startsWith("proxyscope_fleet_") ? 'job="my-collector"' : 'job="my-agent"';
        t.ok(m[2]?.includes(want), `${q.title}: ${m[0]} carries ${want}`);
      }
      for (const m of q.expr.matchAll(/\b(on|by) \(([^)]*)\)/g))
        t.match(m[2], /^k8s_cluster\b/, `${q.title}: ${m[0]} keeps the cluster`);
      if (q.legendFormat?.includes("{{node}}")) t.match(q.legendFormat, /\{\{k8s_cluster\}\}/);
    }
    const dashRules = join(dir, "custom-dashboard-rules.yaml");
    writeFileSync(
      dashRules,
      stringify({
        groups: [
          {
            name: "dashboard",
            rules: exprs.map((q, i) => ({
              record: `dashboard:query_${i}`,
              expr: q.expr.replaceAll("$__rate_interval", "1m"),
            })),
          },
        ],
      }),
    );
    const dc = run(["check", "rules", dashRules]);
    t.equal(dc.status, 0, `the dashboard's queries parse: ${dc.stdout}${dc.stderr}`);
    // The check bites: the same custom cases against the default rules (job="proxyscope-agent") fail.
    writeFileSync(testFile, promtoolTestFile(RULES_FILE, CASES.map(customCase)));
    t.not(run(["test", "rules", testFile]).status, 0, "the default rules do not see job=my-agent");
  },
);
