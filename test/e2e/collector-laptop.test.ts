// From a laptop: outside the cluster the collector cannot dial pod IPs, so it reaches each agent
// through the API server's pod proxy (GET /api/v1/namespaces/NS/pods/NAME:PORT/proxy/report) with the
// kubeconfig's credentials. Everything runs in a network namespace of this test's own that has only
// loopback, as a laptop has no route to the pod network (here 198.51.100.0/24, TEST-NET-2): the API
// server STAND-IN alone reaches the pods (its podNetwork maps each pod IP to the loopback address where
// a real agent listens). One pod's agent does not answer: the API server's own 503 Status is that node's
// named failure, never a dropped node.
import t from "tap";
import { FleetReport } from "../../collector/report/schema.js";
import { VerifyResult } from "../../common/verify-result.js";
import { netnsAvailable, NetNs } from "../helpers/netns.js";
import { freePort } from "../helpers/prometheus.js";
import { startStandin } from "../helpers/standin.js";
import { agentBuilt, startAgent } from "./agent-process.js";
import { agentPod, COLLECTOR_CLI, fleetFlags, node, run, startApiServer } from "./collector-fleet.js";

const skip =
  (!agentBuilt() && "run npm run build first") || (!netnsAvailable() && "cannot create network namespaces");

t.test("a laptop reaches the agents through the API server's pod proxy", { skip }, async (t) => {
  const ns = NetNs.create();
  t.teardown(() => ns.destroy());
  ns.must(["ip", "link", "set", "lo", "up"]);
  const port = await freePort();
  const kp = await startStandin(
    { mode: "nftables", version: "v1.37.1", lastSync: { agoSeconds: 3 } },
    ns.name,
  );
  t.teardown(() => kp.stop());
  // Two real agents; the third pod's address answers nothing (its agent is down).
  const fleet = [
    { name: "laptop-a", podIP: "198.51.100.11", via: "127.0.0.11", agent: true },
    { name: "laptop-b", podIP: "198.51.100.12", via: "127.0.0.12", agent: true },
    { name: "laptop-dead", podIP: "198.51.100.13", via: "127.0.0.13", agent: false },
  ];
  for (const f of fleet.filter((f) => f.agent)) {
    const a = await startAgent({
      netns: ns.name,
      args: [
        ...["--node", f.name, "--listen", f.via, "--port", String(port), "--scan-interval-s", "60"],
        ...["--kube-proxy-metrics-url", kp.metricsUrl, "--kube-proxy-health-url", kp.healthUrl],
        ...["--sync-window-s", "0", "--skip-connect"],
      ],
    });
    t.teardown(() => a.stop());
    await a.scans(1);
  }
  const spec = {
    nodes: fleet.map((f) => node({ name: f.name, kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" })),
    pods: fleet.map((f, i) => agentPod(f.name, f.podIP, i)),
    podNetwork: Object.fromEntries(fleet.map((f) => [f.podIP, f.via])),
  };
  const api = await startApiServer(spec, "stand-in-token", ns.name);
  t.teardown(() => api.stop());
  // The collector on the "laptop": inside the namespace, a kubeconfig, not in a pod.
  const collector = (args: string[]) =>
    run("ip", ["netns", "exec", ns.name, process.execPath, COLLECTOR_CLI, ...args], {
      NO_COLOR: "1",
      KUBERNETES_SERVICE_HOST: "",
    });
  const base = fleetFlags(api.kubeconfig, port);

  await t.test("auto: through the pod proxy; every node listed, the silent one named", async (t) => {
    const r = await collector(["report", ...base, "-o", "json"]);
    t.equal(r.code, 0, r.stderr);
    const rep = FleetReport.parse(JSON.parse(r.stdout));
    const by = new Map(rep.nodes.map((n) => [n.node, n]));
    t.same(
      rep.nodes.map((n) => n.node).sort(),
      fleet.map((f) => f.name),
    );
    for (const name of ["laptop-a", "laptop-b"]) {
      t.equal(by.get(name)?.outcome, "ok", `${name}: ${by.get(name)?.reason}`);
      t.equal(by.get(name)?.phase, "nftables", `${name}: its agent's answer, through the proxy`);
      t.match(
        by.get(name)?.endpoint,
        new RegExp(`/api/v1/namespaces/proxyscope/pods/proxyscope-agent-\\d:${port}/proxy/report/fleet$`),
        "a real agent's FleetDigest, through the proxy",
      );
    }
    const dead = by.get("laptop-dead");
    t.equal(dead?.outcome, "unreachable");
    t.match(
      dead?.reason,
      /the API server answered HTTP 503 ServiceUnavailable: error trying to reach service: dial tcp 198\.51\.100\.13:\d+: connect: connection refused/,
    );
    t.match(r.stderr, /partial report: 1 of 3/);
  });

  await t.test("--agent-access direct from the laptop: the pod IPs do not route, no report", async (t) => {
    const r = await collector(["report", ...base, "--agent-access", "direct", "-o", "json"]);
    t.equal(r.code, 5, "what the collector did before: dial the pod IPs");
    t.match(r.stderr, /none of the 3 node\(s\) answered/);
    const rep = FleetReport.parse(JSON.parse(r.stdout));
    t.same(
      rep.nodes.map((n) => n.outcome),
      ["unreachable", "unreachable", "unreachable"],
    );
    t.match(rep.nodes[0]?.reason, /ENETUNREACH/);
  });

  await t.test("verify --node through the pod proxy", async (t) => {
    const r = await collector(["verify", ...base, "--node", "laptop-a", "-o", "json"]);
    t.ok(r.code === 0 || r.code === 1, `a verify result, not "no report": ${r.stderr}`);
    t.equal(VerifyResult.parse(JSON.parse(r.stdout)).node, "laptop-a");
  });

  await t.test("without pods/proxy in the user's RBAC: each node says what to bind", async (t) => {
    const denied = await startApiServer({ ...spec, forbidden: ["pods/proxy"] }, "stand-in-token", ns.name);
    t.teardown(() => denied.stop());
    const r = await collector(["report", "--kubeconfig", denied.kubeconfig, ...base.slice(2), "-o", "json"]);
    t.equal(r.code, 5, r.stderr);
    const rep = FleetReport.parse(JSON.parse(r.stdout));
    t.equal(rep.nodes.length, 3, "no node dropped");
    for (const n of rep.nodes) {
      t.equal(n.outcome, "http-status", n.node);
      t.match(
        n.reason,
        /HTTP 403 Forbidden: pods "proxyscope-agent-\d" is forbidden: User "proxyscope" cannot get resource "pods\/proxy"/,
      );
      t.match(n.reason, /--clusterrole=proxyscope-laptop/);
    }
  });
});
