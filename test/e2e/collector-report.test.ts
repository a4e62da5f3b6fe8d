// The collector end to end: the official client against the API server STAND-IN, agents on loopback
// serving NodeReports the real agent made (scan --json against fixture trees and the kube-proxy
// stand-in), and the CLI's exit codes for every case.
import t from "tap";
import { EXIT } from "../../common/exit-codes.js";
import { FleetReport } from "../../collector/report/schema.js";
import { freePort } from "../helpers/prometheus.js";
import {
  agentPod,
  blackHoleReport,
  collector,
  fleetFlags,
  fixture,
  node,
  realScan,
  startAgent,
  startApiServer,
  writeKubeconfig,
} from "./collector-fleet.js";
import { emptyFacts, noKernelState } from "../helpers/facts.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

function emptyReport(why: string): FleetReport {
  t.fail(`no report: ${why}`);
  return {
    nodes: [],
    plan: [],
    clusterFindings: [],
    cluster: { services: {} },
    summary: { byPhase: {} },
  } as unknown as FleetReport;
}

const XSS = "<img src=x onerror=alert(1)>";

const port = await freePort();
const ipvsA = await realScan("node-ipvs-a", "6.8.0-1015-aws", "ipvs");
const ipvsB = await realScan("node-ipvs-b", "6.1.0-26-amd64", "ipvs");
const old = await realScan("node-old", "4.18.0-553.el8_10.x86_64", "ipvs");
const nft = await realScan("node-nft", "6.8.0-1015-aws", "nftables");
const blackHole = blackHoleReport(
  "node-blackhole",
  emptyFacts({
    ...noKernelState,
    kernel: { release: "6.8.0-1015-aws", major: 6, minor: 8, patch: 0 },
    proxyMode: { mode: "nftables" },
    kubeIpvs0: {
      present: true,
      kind: "dummy",
      operState: "DOWN",
      flags: ["BROADCAST", "NOARP"],
      addresses: [
        { family: "inet", address: "10.96.0.10", prefixLen: 32 },
        { family: "inet", address: "10.107.44.9", prefixLen: 32 },
      ],
    },
  }),
);
const wrongVersion = JSON.stringify({ ...JSON.parse(ipvsA), schemaVersion: "2", node: "node-schema" });

// One loopback address per agent, all on the same port, the way host-network agents share 9977.
const agents: [string, string, Parameters<typeof startAgent>[2] | null][] = [
  ["node-ipvs-a", "127.0.0.11", { report: ipvsA }],
  ["node-ipvs-b", "127.0.0.12", { report: ipvsB }],
  ["node-old", "127.0.0.13", { report: old }],
  ["node-nft", "127.0.0.14", { report: nft }],
  ["node-blackhole", "127.0.0.15", { report: blackHole }],
  ["node-unreachable", "127.0.0.16", null],
  ["node-garbage", "127.0.0.17", { garbage: "<html><body>502 Bad Gateway</body></html>" }],
  ["node-schema", "127.0.0.18", { report: wrongVersion }],
  ["node-hang", "127.0.0.19", { hang: true }],
  ["node-500", "127.0.0.20", { status: 500 }],
  ["ghost-node", "127.0.0.21", { report: JSON.stringify({ ...JSON.parse(ipvsA), node: "ghost-node" }) }],
];
const stops = await Promise.all(agents.flatMap(([, ip, b]) => (b ? [startAgent(ip, port, b)] : [])));
t.teardown(() => Promise.all(stops.map((s) => s())));

const apiNodes = [
  node({
    name: "node-ipvs-a",
    kernel: "6.8.0-1015-aws",
    osImage: "Ubuntu 24.04.1 LTS",
    labels: { "node.kubernetes.io/instance-type": "m6i.large" },
  }),
  node({
    name: "node-ipvs-b",
    kernel: "6.1.0-26-amd64",
    osImage: "Debian GNU/Linux 12 (bookworm)",
    labels: { "node.kubernetes.io/instance-type": "m5.large" },
  }),
  node({
    name: "node-old",
    kernel: "4.18.0-553.el8_10.x86_64",
    osImage: "Red Hat Enterprise Linux 8.10 (Ootpa)",
  }),
  node({ name: "node-nft", kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" }),
  node({ name: "node-blackhole", kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" }),
  node({ name: "node-unreachable", kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" }),
  node({ name: "node-garbage", kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" }),
  node({ name: "node-schema", kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" }),
  node({ name: "node-hang", kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" }),
  node({ name: "node-500", kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" }),
  // No agent pod at all, and a name and label carrying markup (the stand-in does not validate names).
  node({
    name: XSS,
    kernel: "5.4.0-216-generic",
    osImage: "Ubuntu 20.04.6 LTS</script>",
    labels: { pool: "</script><script>alert(2)</script>" },
  }),
];
const pods = agents.map(([n, ip], i) => agentPod(n, ip, i));

const api = await startApiServer({ nodes: apiNodes, pods });
t.teardown(() => api.stop());
const base = ["report", ...fleetFlags(api.kubeconfig, port), "--concurrency", "4"];

const json = await collector([...base, "--output", "json"]);
// Parsed only when a report came: a failure must fail the tests below, not hang the file on open servers.
const report = json.code === 0 ? FleetReport.parse(JSON.parse(json.stdout)) : emptyReport(json.stderr);
const byNode = new Map(report.nodes.map((n) => [n.node, n]));

t.test(
  "every node the API lists is in the report, each once, plus the agent the API does not list",
  async (t) => {
    t.equal(json.code, 0, json.stderr);
    for (const n of apiNodes as { metadata: { name: string } }[])
      t.equal(report.nodes.filter((x) => x.node === n.metadata.name).length, 1, n.metadata.name);
    t.equal(report.nodes.length, apiNodes.length + 1);
    t.equal(byNode.get("ghost-node")?.listedByApi, false);
    t.equal(byNode.get("ghost-node")?.outcome, "ok");
    t.equal(report.summary.notListedByApi, 1);
  },
);

t.test("each failure is named, with its reason, and makes the report partial", async (t) => {
  const outcome = (n: string) => byNode.get(n)?.outcome;
  t.equal(outcome("node-unreachable"), "unreachable");
  t.equal(outcome("node-garbage"), "garbage");
  t.match(byNode.get("node-garbage")?.reason, /not JSON/);
  t.equal(outcome("node-schema"), "schema-mismatch");
  t.match(byNode.get("node-schema")?.reason, /schemaVersion "2"/);
  t.equal(outcome("node-hang"), "timeout");
  t.equal(outcome("node-500"), "http-status");
  t.match(byNode.get("node-500")?.reason, /HTTP 500/);
  t.equal(outcome(XSS), "no-agent");
  t.equal(report.partial, true);
  t.equal(report.summary.unanswered, 6);
  t.equal(report.summary.byPhase["no-report"], 6);
  t.match(json.stderr, /partial report: 6 of 12/);
});

t.test("answered nodes carry exactly what their agent said, joined with the Node object", async (t) => {
  for (const [name, body] of [
    ["node-ipvs-a", ipvsA],
    ["node-old", old],
    ["node-nft", nft],
    ["node-blackhole", blackHole],
  ] as const) {
    const r = JSON.parse(body);
    const n = byNode.get(name)!;
    t.equal(n.phase, r.phase, `${name} phase`);
    t.equal(n.verdict, r.verdict, `${name} verdict`);
    t.same(
      n.findings.map((f) => f.id).sort(),
      r.findings.map((f: { id: string }) => f.id).sort(),
      `${name} findings`,
    );
  }
  t.equal(byNode.get("node-old")?.verdict, "blocked");
  t.equal(byNode.get("node-blackhole")?.blackHoledAddresses, 2);
  t.equal(byNode.get("node-ipvs-b")?.kubeletVersion, "v1.37.1");
  t.equal(byNode.get("node-ipvs-b")?.osImage, "Debian GNU/Linux 12 (bookworm)");
  t.equal(byNode.get("node-ipvs-b")?.internalIP, "192.168.4.21");
  t.match(byNode.get("node-ipvs-b")?.pool, /^m5\.large · Debian/);
});

t.test(
  "cluster facts through the official client: kubeadm ConfigMap, DaemonSet command, Services, version",
  async (t) => {
    const ids = report.clusterFindings.map((f) => f.id);
    t.equal(report.cluster.configuredMode, "ipvs");
    t.equal(report.cluster.kubeProxyDaemonSet?.configFlag, "/var/lib/kube-proxy/config.conf");
    t.same(report.cluster.kubeProxyConfigMap?.config?.ipvs?.keys, ["scheduler", "strictARP"]);
    t.equal(report.cluster.kubeadm, true);
    t.equal(report.cluster.deprecationStage, "gated");
    t.ok(ids.includes("cluster-ipvs-mode-configured"));
    t.ok(ids.includes("cluster-kubeadm-reverts-configmap"));
    t.ok(ids.includes("cluster-kernels-too-old-for-nftables"));
    t.ok(ids.includes("cluster-nodes-disagree-with-config"), "node-nft and node-blackhole run nftables");
    t.notOk(ids.includes("cluster-proxy-mode-not-pinned"));
    t.same(report.cluster.services.sessionAffinityClientIP, ["prod/api"]);
    t.same(report.cluster.services.externalTrafficPolicyLocal, ["prod/ingress"]);
    t.same(report.cluster.services.nodePorts.map((p) => p.nodePort).sort(), [30080, 31380, 31390]);
  },
);

t.test("the plan, in the guide's order, with the nodes each step concerns", async (t) => {
  t.same(
    report.plan.map((p) => p.id),
    ["pin-mode", "kernels", "counters-and-nodeports", "canary-then-pools", "remove-ipvs-config"],
  );
  t.equal(report.plan[0]!.status, "done");
  t.equal(report.plan[1]!.status, "todo");
  t.ok(report.plan[1]!.nodes.includes("node-old"));
  t.ok(report.plan[1]!.nodes.includes(XSS), "the unanswered node's kernel comes from its Node object");
  t.equal(report.plan[4]!.status, "blocked");
});

t.test("exit codes", async (t) => {
  const blocked = await collector([...base, "--fail-on", "blocked"]);
  t.equal(blocked.code, 1, "node-old is blocked");
  t.match(blocked.stderr, /--fail-on blocked: 1 reached it \(node-old: blocked\)/);
  const unanswered = await collector([...base, "--fail-on", "unanswered"]);
  t.equal(unanswered.code, 1);
  const table = await collector(base);
  t.equal(table.code, 0, "no --fail-on: a report was made");
  t.match(table.stdout, /PARTIAL/);
  const bad = await collector([...base, "--fail-on", "purple"]);
  t.equal(bad.code, EXIT.usage);
  t.match(bad.stderr, /invalid --fail-on/);

  const dir = mkdtempSync(join(tmpdir(), "proxyscope-kc-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const closed = await freePort();
  const down = await collector([
    "report",
    "--kubeconfig",
    writeKubeconfig(dir, `http://127.0.0.1:${closed}`, "x"),
  ]);
  t.equal(down.code, EXIT.noReport, "API unreachable: no report");
  t.match(down.stderr, /cannot list nodes/);
  t.equal(down.stdout, "", "nothing that could pass for a report");
  const denied = await collector(["report", "--kubeconfig", writeKubeconfig(dir, api.url, "wrong-token")]);
  t.equal(denied.code, EXIT.noReport);
  t.match(denied.stderr, /HTTP 401/);
});

t.test("a clean small fleet exits 0 under --fail-on blocked; a Forbidden read is a named gap", async (t) => {
  const api2 = await startApiServer({
    nodes: [node({ name: "node-ipvs-a", kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" })],
    pods: [agentPod("node-ipvs-a", "127.0.0.11", 0)],
    forbidden: ["services"],
    configMaps: [{ ...fixture<object>("kube-proxy-configmap.kubeadm-ipvs.json") }],
  });
  t.teardown(() => api2.stop());
  const r = await collector([
    "report",
    ...fleetFlags(api2.kubeconfig, port),
    "--fail-on",
    "blocked",
    "--output",
    "json",
  ]);
  t.not(JSON.parse(ipvsA).verdict, "blocked");
  t.equal(r.code, 0, r.stderr);
  const rep = FleetReport.parse(JSON.parse(r.stdout));
  t.equal(rep.partial, false);
  t.match(rep.cluster.gaps, [{ what: "services (all namespaces)", reason: /HTTP 403/ }]);
  t.equal(rep.cluster.kubeadm, false);
});

t.test("static source: agent URLs without API access", async (t) => {
  const r = await collector([
    "report",
    "--source",
    "static",
    "--output",
    "json",
    "--timeout-ms",
    "60000",
    "--agents",
    `node-ipvs-a=http://127.0.0.11:${port}`,
    `http://127.0.0.17:${port}`,
  ]);
  t.equal(r.code, 0, r.stderr);
  const rep = FleetReport.parse(JSON.parse(r.stdout));
  t.same(
    rep.nodes.map((n) => [n.node, n.outcome, n.listedByApi]),
    [
      ["node-ipvs-a", "ok", null],
      [`http://127.0.0.17:${port}`, "garbage", null],
    ],
  );
});

t.test(
  "static source, no API access, no node answering: no claims about the fleet, and no report",
  async (t) => {
    const r = await collector([
      "report",
      "--source",
      "static",
      "--output",
      "json",
      "--timeout-ms",
      "60000",
      "--agents",
      "node-a=http://127.0.0.1:1",
      "node-b=http://127.0.0.1:1",
    ]);
    t.equal(r.code, 5, "exit code 5: no report");
    t.match(r.stderr, /none of the 2 node\(s\) answered/);
    const rep = FleetReport.parse(JSON.parse(r.stdout));
    t.same(
      rep.nodes.map((n) => n.outcome),
      ["unreachable", "unreachable"],
      "both nodes are still in the report, named",
    );
    const details = rep.plan.map((p) => p.detail).join("\n");
    t.notMatch(details, /No kube-proxy in this cluster/, "not knowing is not knowing there is none");
    t.notMatch(details, /Every answered node has moved/);
    t.match(details, /No node answered/);
  },
);

t.test("markdown and table escape what nodes and the API supply", async (t) => {
  const md = await collector([...base, "--output", "markdown"]);
  t.notMatch(md.stdout, /<img/);
  t.match(md.stdout, /&lt;img src=x onerror=alert\(1\)&gt;/);
  t.notMatch(md.stdout, /<\/script>/);
});
