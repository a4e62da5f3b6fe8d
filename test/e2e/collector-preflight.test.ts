// The first answer with nothing installed: `proxyscope report` against a cluster with no agent deployed
// (the API server STAND-IN lists nodes and no agent pod) gives the cluster-only preflight, says so in
// every format's heading, names every node it could not read, and exits 0 unless --fail-on is reached.
import t from "tap";
import { parse as parseYaml } from "yaml";
import { EXIT } from "../../common/exit-codes.js";
import { FleetReport } from "../../collector/report/schema.js";
import { collector, fleetFlags, node, startApiServer } from "./collector-fleet.js";

const XSS = "<b>node-x</b>";
const api = await startApiServer({
  nodes: [
    node({ name: "pre-new", kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" }),
    node({ name: "pre-old", kernel: "4.18.0-553.el8_10.x86_64", osImage: "Red Hat Enterprise Linux 8.10" }),
    node({ name: XSS, kernel: "6.1.0-26-amd64", osImage: "Debian GNU/Linux 12 (bookworm)" }),
  ],
  pods: [],
});
t.teardown(() => api.stop());
const base = ["report", ...fleetFlags(api.kubeconfig, 9977)];

t.test("no agent deployed: the cluster-only preflight, exit 0", async (t) => {
  const r = await collector([...base, "-o", "json"]);
  t.equal(r.code, EXIT.ok, r.stderr);
  t.match(r.stderr, /cluster-only preflight: no agent deployed; 3 node\(s\) not read/);
  const rep = FleetReport.parse(JSON.parse(r.stdout));
  t.equal(rep.scope?.kind, "cluster-only");
  t.match(rep.scope?.heading, /^cluster-only preflight: no proxyscope agent is deployed/);
  t.same(rep.scope?.notRead.map((l) => l.split(":")[0]).sort(), ["<b>node-x</b>", "pre-new", "pre-old"]);
  for (const n of rep.nodes) {
    t.equal(n.outcome, "no-agent", `${n.node}: not read`);
    t.equal(n.verdict, null, `${n.node}: no verdict is claimed`);
    t.equal(n.phase, null, `${n.node}: no phase is claimed`);
    t.same(n.findings, [], `${n.node}: no node finding is claimed`);
    t.equal(n.failedProbes.length, 0);
  }
  // The kernels come from Node.status.nodeInfo, and the check over them runs.
  t.equal(rep.nodes.find((n) => n.node === "pre-old")?.kernel, "4.18.0-553.el8_10.x86_64");
  t.same(rep.nodes.find((n) => n.node === "pre-old")?.kernelNftables, { capable: false, from: "api" });
  const ids = rep.clusterFindings.map((f) => f.id);
  t.ok(ids.includes("cluster-kernels-too-old-for-nftables"), ids.join(" "));
  t.ok(ids.includes("cluster-deprecation-stage"), "the deprecation stage");
  t.ok(ids.includes("cluster-config-source"), "where the mode comes from");
  t.ok(ids.includes("cluster-nodeport-inventory"), "the Services the switch changes");
});

t.test("every format's heading says it is a cluster-only preflight and names the nodes", async (t) => {
  for (const [fmt, heading, node] of [
    ["table", /^cluster-only preflight: /, /not read \(3\): .*pre-old: no-agent/],
    ["markdown", /^# proxyscope fleet report\n\n> \*\*cluster-only preflight: /, /not read \(3\)/],
    ["html", /<h1>[^<]* — cluster-only preflight<\/h1>/, /not read \(3\): .*&lt;b&gt;node-x&lt;\/b&gt;/],
    ["csv", /^pool,.*,report_scope\r\n/, /,cluster-only preflight\r\n/],
    ["yaml", /^schemaVersion: "\d+"\n.*\n.*\n.*\nsource: agents\nscope:\n {2}kind: cluster-only/, /notRead:/],
  ] as const) {
    const r = await collector([...base, "-o", fmt]);
    t.equal(r.code, EXIT.ok, `${fmt}: ${r.stderr}`);
    t.match(r.stdout, heading, `${fmt}: heading`);
    t.match(r.stdout, node, `${fmt}: the nodes not read`);
    if (fmt === "html") t.notMatch(r.stdout, /<b>node-x/, "a node name is escaped");
    if (fmt === "yaml") t.ok(parseYaml(r.stdout), "yaml parses");
  }
});

t.test("--fail-on still judges: the kernel error, and unanswered nodes", async (t) => {
  const err = await collector([...base, "-o", "json", "--fail-on", "error"]);
  t.equal(err.code, EXIT.findings, err.stderr);
  t.match(err.stderr, /--fail-on error: .*cluster-kernels-too-old-for-nftables/);
  const un = await collector([...base, "-o", "json", "--fail-on", "unanswered"]);
  t.equal(un.code, EXIT.findings, un.stderr);
  t.match(un.stderr, /pre-new: no-agent/);
  const crit = await collector([...base, "-o", "json", "--fail-on", "critical"]);
  t.equal(crit.code, EXIT.ok, "nothing critical: exit 0");
});
