import t from "tap";
import { NetNs, netnsAvailable, withNetns } from "../helpers/netns.js";
import { finding, parseScanOutput } from "../helpers/scan-report.js";
import { AGENT_CLI, startStandin } from "../helpers/standin.js";
import { agentBuilt } from "../e2e/agent-process.js";
import type { NodeReport } from "../../agent/report/schema.js";

// health-check-nodeports-shrink on real kernel state: a network namespace with a primary address
// (10.20.0.5, the default route's) and a second NIC (10.20.1.5), ipvs mode's KUBE-HEALTH-CHECK-NODE-PORT
// set holding 31234, conntrack active (a netfilter rule using ct, as kube-proxy's own rules do), and the
// kube-proxy STAND-IN answering ipvs mode with a healthCheckNodePort served like kube-proxy's service
// health server: on 0.0.0.0, bound dual-stack. The real agent CLI scans from inside the namespace.
// What an SRE expects: a load balancer's checks arriving on the second NIC's address -> error, blocks
// (after the switch it would see this node down); the same node with no check seen -> a warning.

t.setTimeout(1_800_000);
const skip =
  (!agentBuilt() && "run npx tsc -p . first (the agent and the stand-in run from dist/)") ||
  (!netnsAvailable() && "network namespaces need root");

const SCENARIO = {
  mode: "ipvs",
  version: "v1.34.3",
  lastSync: { agoSeconds: 3 },
  healthy: true,
  healthCheckNodePorts: [{ port: 31234, namespace: "web", name: "shop", localEndpoints: 1 }],
};

function node(ns: NetNs): void {
  ns.must(["ip", "link", "set", "lo", "up"]);
  for (const [dev, addr] of [
    ["eth0", "10.20.0.5/24"],
    ["eth1", "10.20.1.5/24"],
  ]) {
    // A veth pair stands for the NIC (this host kernel has no dummy module); its peer stays unaddressed.
    ns.must(["ip", "link", "add", dev!, "type", "veth", "peer", "name", `${dev!}-peer`]);
    ns.must(["ip", "addr", "add", addr!, "dev", dev!]);
    ns.must(["ip", "link", "set", `${dev!}-peer`, "up"]);
    ns.must(["ip", "link", "set", dev!, "up"]);
  }
  ns.must(["ip", "route", "add", "default", "via", "10.20.0.1", "dev", "eth0", "src", "10.20.0.5"]);
  ns.ipsetRestore(
    "create KUBE-HEALTH-CHECK-NODE-PORT bitmap:port range 0-65535 comment\nadd KUBE-HEALTH-CHECK-NODE-PORT 31234\n",
  );
  ns.loadNft(
    "add table inet proxyscope-test\nadd chain inet proxyscope-test in { type filter hook input priority 0 ; }\nadd rule inet proxyscope-test in ct state established,related accept\n",
  );
}

/** The stand-in up, `checkFrom` health checks sent to these addresses, then one scan. */
async function scan(ns: NetNs, checks: string[]): Promise<NodeReport> {
  const standin = await startStandin(SCENARIO, ns.name);
  try {
    for (const addr of checks) {
      const get = ns.exec([
        process.execPath,
        "-e",
        `require("http").get("http://${addr}:31234/", (res) => { res.resume(); res.on("end", () => process.exit(res.statusCode === 200 ? 0 : 1)); }).on("error", (e) => { console.error(e.message); process.exit(2); })`,
      ]);
      if (get.code !== 0) throw new Error(`health check to ${addr} failed: ${get.stderr}`);
    }
    const out = ns.runNode(AGENT_CLI, [
      "scan",
      "--json",
      "--node",
      "hc",
      "--kube-proxy-metrics-url",
      standin.metricsUrl,
      "--kube-proxy-health-url",
      standin.healthUrl,
    ]);
    if (out.code !== 0) throw new Error(`scan exited ${out.code}: ${out.stderr}`);
    return parseScanOutput(out.stdout);
  } finally {
    await standin.stop();
  }
}

t.test("checks arriving on the second NIC's address: error, blocks", { skip }, (t) =>
  withNetns(async (ns) => {
    node(ns);
    const r = await scan(ns, ["10.20.1.5", "10.20.0.5"]);
    t.equal(r.phase, "ipvs");
    const x = finding(r, "health-check-nodeports-shrink");
    t.equal(x?.severity, "error");
    t.equal(x?.blocksMigration, true);
    t.equal(r.verdict, "blocked");
    t.same(x?.evidence.healthCheckNodePorts, [31234]);
    t.same(x?.evidence.listeningOnEveryAddress, ["[::]:31234"]);
    t.same(x?.evidence.connectionsOnNonPrimary, ["10.20.1.5:31234 (1 connections)"]);
    t.same(x?.evidence.primary, ["10.20.0.5"]);
    // The stand-in's process, traced through its metrics socket, holds the health-check listener.
    t.equal(r.facts.listeners?.kubeProxyProcess.traced, true);
    t.equal(r.facts.listeners?.tcp.find((s) => s.port === 31234)?.kubeProxy, true);
  }),
);

t.test("the same node with checks on the primary address only: a warning to check", { skip }, (t) =>
  withNetns(async (ns) => {
    node(ns);
    const r = await scan(ns, ["10.20.0.5"]);
    const x = finding(r, "health-check-nodeports-shrink");
    t.equal(x?.severity, "warning");
    t.equal(x?.blocksMigration, false);
    t.same(x?.evidence.connectionsOnNonPrimary, []);
    t.same(x?.evidence.nonPrimaryAddresses, ["10.20.1.5 (eth1)"]);
    t.equal(r.verdict, "attention");
  }),
);
