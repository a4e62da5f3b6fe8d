// The fault matrix of the collector's sources, as one table: each row breaks one thing — an agent, one
// API resource, or Prometheus — and runs the real CLI against the API server STAND-IN and loopback
// agents serving real agent scans. Every row asserts the same three things: no node the API lists is
// missing from the report, the failure is named (the node's reason, a cluster gap, or the one-line
// error), and the exit code says so: 1 under --fail-on unanswered when the report is partial, 5 (no report)
// when none can be made. collector-report.test.ts covers the agent faults in one mixed fleet (their
// outcomes, the ghost node, the plan); rows here add each fault alone and the faults it does not.
import http from "node:http";
import t from "tap";
import { EXIT } from "../../common/exit-codes.js";
import { FleetReport } from "../../collector/report/schema.js";
import { freePort } from "../helpers/prometheus.js";
import {
  agentPod,
  collector,
  fleetFlags,
  node,
  realScan,
  startAgent,
  startApiServer,
  type AgentBehaviour,
} from "./collector-fleet.js";

// Faults never answer (a hang or a stalled body, not a late answer), so the deadline only has to
// outlast a healthy answer and a 17 MiB one on a loaded 2-core machine: 1 s and then 3 s were missed
// at load 8-17, and processes got ~4% of a CPU each at load 45.
const TIMEOUT_MS = 60_000;
// ~36 rows of two processes each; on a machine at load 17 the whole file took longer than tap's 600 s.
t.setTimeout(1_800_000);
const port = await freePort();
const [ipvs, nft] = await Promise.all([
  realScan("node-a", "6.8.0-1015-aws", "ipvs"),
  realScan("node-b", "6.8.0-1015-aws", "nftables"),
]);

// Two healthy agents every row shares, and one agent per fault on its own loopback address.
const healthy: [string, string][] = [
  ["node-a", "127.0.0.41"],
  ["node-b", "127.0.0.42"],
];
const AGENT_FAULTS: Record<string, { ip: string; b: AgentBehaviour | null }> = {
  down: { ip: "127.0.0.43", b: null },
  stalled: { ip: "127.0.0.44", b: { stall: ipvs.replace(/node-a/g, "node-x") } },
  garbage: { ip: "127.0.0.45", b: { garbage: "\u001b[2J<html>502 Bad Gateway</html>" } },
  "schema version 2": {
    ip: "127.0.0.46",
    b: { report: JSON.stringify({ ...JSON.parse(ipvs), schemaVersion: "2", node: "node-x" }) },
  },
  "huge body": { ip: "127.0.0.47", b: { hugeBytes: 5 * 1024 * 1024 } },
  "HTTP 500": { ip: "127.0.0.48", b: { status: 500 } },
  "valid JSON, not a NodeReport": { ip: "127.0.0.49", b: { report: '{"schemaVersion":"1","node":[]}' } },
  // node-a's report from node-x's agent: the target decides the row, so it is node-x's failure.
  "another node's report": { ip: "127.0.0.51", b: { report: ipvs } },
};
// The same faults from agents that serve /report/fleet (the ones above predate it: the collector
// reads them on /report after a 404). A fault must come out the same by either route (the fleet digest).
const CURRENT_IP: Record<keyof typeof AGENT_FAULTS, string> = {
  down: "127.0.0.61",
  stalled: "127.0.0.62",
  garbage: "127.0.0.63",
  "schema version 2": "127.0.0.64",
  "huge body": "127.0.0.65",
  "HTTP 500": "127.0.0.66",
  "valid JSON, not a NodeReport": "127.0.0.67",
  "another node's report": "127.0.0.68",
};
// node-x's agent when the row breaks something else: healthy, and answering as node-x.
const HEALTHY_X = { ip: "127.0.0.50", b: { report: ipvs.replace(/node-a/g, "node-x") } };
const stops = await Promise.all([
  // node-a's agent serves /report/fleet, node-b's predates it: every row reads a fleet mid-rollout.
  startAgent("127.0.0.41", port, { report: ipvs }, { current: true }),
  startAgent("127.0.0.42", port, { report: nft }),
  startAgent(HEALTHY_X.ip, port, HEALTHY_X.b),
  ...Object.values(AGENT_FAULTS).flatMap(({ ip, b }) => (b ? [startAgent(ip, port, b)] : [])),
  ...Object.entries(AGENT_FAULTS).flatMap(([k, { b }]) =>
    b ? [startAgent(CURRENT_IP[k]!, port, b, { current: true })] : [],
  ),
]);
t.teardown(() => Promise.all(stops.map((s) => s())));

// A Prometheus HTTP API stand-in per behaviour: path /<behaviour>/api/v1/query.
const promPort = await freePort();
const closedPort = await freePort();
const prom = http.createServer((req, res) => {
  const kind = decodeURIComponent(req.url!.split("/")[1]!);
  const json = (code: number, body: unknown) =>
    res.writeHead(code, { "content-type": "application/json" }).end(JSON.stringify(body));
  if (kind === "500") return json(500, { status: "error", errorType: "internal", error: "boom" });
  if (kind === "garbage") return res.writeHead(200).end("<html>\u001b]0;pwned\u0007 not JSON");
  if (kind === "error")
    return json(422, { status: "error", errorType: "execution", error: "query timed out in expression" });
  if (kind === "error-200")
    return json(200, { status: "error", errorType: "bad_data", error: "invalid parameter query" });
  return json(200, { status: "success", data: { resultType: "vector", result: [] } });
});
await new Promise<void>((r) => prom.listen(promPort, "127.0.0.1", () => r()));
t.teardown(() => new Promise<void>((r) => prom.close(() => r())));

const NODES = ["node-a", "node-b", "node-x"];
const apiNodes = NODES.map((name) => node({ name, kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" }));

interface Row {
  name: string;
  /** The agent behind node-x (default: a healthy one answering as node-x). */
  agent?: keyof typeof AGENT_FAULTS;
  /** That agent serves /report/fleet (default: it predates it). */
  current?: boolean;
  faults?: Record<string, number | "hang">;
  prometheus?: string;
  /** Expected exit under --fail-on unanswered. */
  exit: typeof EXIT.findings | typeof EXIT.noReport;
  /** How the failure must be named: node-x's outcome and reason, a cluster gap, or stderr. */
  named:
    | { node: string; outcome: string; reason: RegExp }
    | { gap: RegExp; reason: RegExp }
    | { stderr: RegExp }
    | { allNodes: string; reason: RegExp };
  /** Findings that would claim as absent what could not be read. */
  notFindings?: string[];
}

const agentRows: Row[] = [
  {
    name: "agent down",
    agent: "down",
    exit: EXIT.findings,
    named: { node: "node-x", outcome: "unreachable", reason: /ECONNREFUSED.*after one retry/ },
  },
  {
    name: "agent stalls mid-body",
    agent: "stalled",
    exit: EXIT.findings,
    named: { node: "node-x", outcome: "timeout", reason: new RegExp(`within ${TIMEOUT_MS} ms`) },
  },
  {
    name: "agent answers garbage",
    agent: "garbage",
    exit: EXIT.findings,
    named: { node: "node-x", outcome: "garbage", reason: /not JSON: "\\u001b\[2J<html>/ },
  },
  {
    name: "agent answers schema version 2",
    agent: "schema version 2",
    exit: EXIT.findings,
    named: { node: "node-x", outcome: "schema-mismatch", reason: /schemaVersion "2"/ },
  },
  {
    name: "agent answers 5 MiB (over the 4 MiB cap)",
    agent: "huge body",
    exit: EXIT.findings,
    named: { node: "node-x", outcome: "garbage", reason: /answer too large: .*more than 4194304 bytes/ },
  },
  {
    name: "agent answers HTTP 500",
    agent: "HTTP 500",
    exit: EXIT.findings,
    named: { node: "node-x", outcome: "http-status", reason: /HTTP 500/ },
  },
  {
    name: "agent answers JSON that is not a NodeReport",
    agent: "valid JSON, not a NodeReport",
    exit: EXIT.findings,
    named: { node: "node-x", outcome: "garbage", reason: /not a NodeReport: / },
  },
  {
    name: "agent answers for another node",
    agent: "another node's report",
    exit: 1,
    named: { node: "node-x", outcome: "wrong-node", reason: /answered for node "node-a", not "node-x"/ },
  },
];

// Each agent fault again, from an agent that serves /report/fleet: the same outcome, the reason naming
// the document that route serves.
agentRows.push(
  ...agentRows.map((r) => ({
    ...r,
    name: `current agent: ${r.name}`,
    current: true,
    named:
      "node" in r.named && r.named.outcome === "garbage" && /NodeReport/.test(r.named.reason.source)
        ? { ...r.named, reason: /not a FleetDigest: / }
        : r.named,
  })),
);

const STATUS_REASON = (f: number | "hang") => (f === "hang" ? /timed out/ : new RegExp(`HTTP ${f}`));
const apiRows: Row[] = [];
// A token is good for every read or for none: 401 is a row for Nodes; per resource, 403, 500 and a hang.
for (const f of [401, 403, 500, "hang"] as const) {
  apiRows.push({
    name: `Nodes: ${f}`,
    faults: { nodes: f },
    exit: EXIT.noReport,
    named: { stderr: new RegExp(`cannot list nodes .*${STATUS_REASON(f).source}`) },
  });
  if (f === 401) continue;
  for (const [resource, gap, notFindings] of [
    [
      "configmaps/kube-proxy",
      /^configmap kube-system\/kube-proxy$/,
      ["cluster-proxy-mode-not-pinned", "cluster-no-kube-proxy", "cluster-nodes-disagree-with-config"],
    ],
    ["daemonsets", /^daemonset kube-system\/kube-proxy$/, ["cluster-no-kube-proxy"]],
    // The network plugin check's list of every DaemonSet: a failed list is "not read", never "no plugin".
    ["daemonsets:list", /^daemonsets \(all namespaces\)$/, []],
    ["services", /^services/, []],
    ["version", /^\/version$/, []],
  ] as const)
    apiRows.push({
      name: `${resource}: ${f}`,
      faults: { [resource]: f },
      exit: EXIT.findings,
      named: { gap, reason: STATUS_REASON(f) },
      notFindings: [...notFindings],
    });
}
apiRows.push(
  {
    name: "Nodes: 404",
    faults: { nodes: 404 },
    exit: EXIT.noReport,
    named: { stderr: /cannot list nodes .*HTTP 404/ },
  },
  {
    name: "services: 404 (a list cannot be absent)",
    faults: { services: 404 },
    exit: EXIT.findings,
    named: { gap: /^services/, reason: /HTTP 404/ },
  },
  {
    name: "version: 404",
    faults: { version: 404 },
    exit: EXIT.findings,
    named: { gap: /^\/version$/, reason: /HTTP 404/ },
  },
  {
    name: "agent pods: 500",
    faults: { pods: 500 },
    exit: EXIT.noReport,
    named: { stderr: /cannot list agent pods .*HTTP 500/ },
  },
);

const promRows: Row[] = [
  {
    name: "Prometheus refused",
    prometheus: `http://127.0.0.1:${closedPort}`,
    exit: EXIT.noReport,
    named: { stderr: /ECONNREFUSED/ },
  },
  { name: "Prometheus 500", prometheus: "500", exit: EXIT.noReport, named: { stderr: /HTTP 500/ } },
  {
    name: "Prometheus garbage JSON",
    prometheus: "garbage",
    exit: EXIT.noReport,
    named: { stderr: /not JSON/ },
  },
  {
    name: 'Prometheus status "error" (422)',
    prometheus: "error",
    exit: EXIT.noReport,
    named: { stderr: /HTTP 422.*query timed out/ },
  },
  {
    name: 'Prometheus status "error" with 200',
    prometheus: "error-200",
    exit: EXIT.noReport,
    named: { stderr: /bad_data.*invalid parameter query/ },
  },
  {
    name: "Prometheus empty result",
    prometheus: "empty",
    // Not one node answered: the report is printed (each node named with why) but it is no report.
    exit: EXIT.noReport,
    named: { allNodes: "no-data", reason: /./ },
  },
];

async function runRow(row: Row) {
  const agentIp = row.agent
    ? row.current
      ? CURRENT_IP[row.agent]!
      : AGENT_FAULTS[row.agent]!.ip
    : HEALTHY_X.ip;
  const api = await startApiServer({
    nodes: apiNodes,
    pods: [...healthy, ["node-x", agentIp] as const].map(([n, ip], i) => agentPod(n, ip, i)),
    faults: row.faults ?? {},
  });
  try {
    const source = row.prometheus
      ? [
          "--source",
          "prometheus",
          "--prometheus-url",
          row.prometheus.startsWith("http")
            ? row.prometheus
            : `http://127.0.0.1:${promPort}/${row.prometheus}`,
        ]
      : [];
    return await collector([
      "report",
      ...fleetFlags(api.kubeconfig, port, TIMEOUT_MS),
      "--output",
      "json",
      "--fail-on",
      "unanswered",
      ...source,
    ]);
  } finally {
    await api.stop();
  }
}

const rows = [...agentRows, ...apiRows, ...promRows];
// Rows are independent (one API stand-in each): run them a few at a time, assert in table order.
const results = new Map<Row, Awaited<ReturnType<typeof runRow>>>();
for (let i = 0; i < rows.length; i += 8)
  await Promise.all(rows.slice(i, i + 8).map(async (r) => results.set(r, await runRow(r))));

for (const row of rows) {
  t.test(row.name, async (t) => {
    const r = results.get(row)!;
    t.equal(r.code, row.exit, `exit ${row.exit}; stderr: ${r.stderr.slice(0, 300)}`);
    t.notMatch(r.stderr, /internal error/, "no throw reached the CLI");
    if (row.exit === EXIT.noReport && !("allNodes" in row.named)) {
      t.equal(r.stdout, "", "nothing that could pass for a report");
      if ("stderr" in row.named) t.match(r.stderr, row.named.stderr, "the failure is named");
      return;
    }
    const rep = FleetReport.parse(JSON.parse(r.stdout));
    const names = rep.nodes.map((n) => n.node);
    for (const n of NODES) t.ok(names.includes(n), `${n} is in the report`);
    t.match(
      r.stderr,
      row.exit === EXIT.noReport
        ? /no report: none of the \d+ node\(s\) answered/
        : /--fail-on unanswered: \d+ reached it/,
      "the exit code says the report is partial, or that no node answered",
    );
    const named = row.named;
    if ("node" in named) {
      const n = rep.nodes.find((x) => x.node === named.node);
      t.equal(n?.outcome, named.outcome);
      t.match(n?.reason, named.reason);
      t.equal(rep.partial, true);
      t.equal(rep.summary.unanswered, 1);
      t.same(
        rep.nodes.filter((x) => x.node !== named.node).map((x) => x.outcome),
        ["ok", "ok"],
        "the other nodes are intact",
      );
    } else if ("gap" in named) {
      const gap = rep.cluster.gaps.find((g) => named.gap.test(g.what));
      t.ok(gap, `a gap names ${named.gap}: ${JSON.stringify(rep.cluster.gaps)}`);
      t.match(gap?.reason, named.reason);
      t.same(
        rep.nodes.map((x) => x.outcome),
        ["ok", "ok", "ok"],
        "the nodes are intact",
      );
    } else if ("allNodes" in named) {
      t.same(
        rep.nodes.map((x) => [x.node, x.outcome]),
        NODES.map((n) => [n, named.allNodes]),
      );
      t.equal(rep.partial, true);
    }
    for (const id of row.notFindings ?? [])
      t.notOk(
        rep.clusterFindings.some((f) => f.id === id),
        `no ${id}: an unread object is not an absent one`,
      );
  });
}
