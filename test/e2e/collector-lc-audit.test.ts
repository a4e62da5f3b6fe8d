import t from "tap";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AGENT_CLI } from "../helpers/standin.js";
import { REPO_ROOT } from "../helpers/uml.js";
import { agentPod, collector, fleetFlags, node, startApiServer } from "./collector-fleet.js";
import { spawnOwned, stopOwned } from "../helpers/children.js";
import { freePort } from "../helpers/prometheus.js";

// lc-audit end to end: the stand-in API server names the Service and the agent pods; real agent
// processes serve /proc/net/ip_vs tables recorded in UML from two client nodes that opened real
// connections through their own `lc` IPVS tables (test/fixtures/ipvs/lc-audit); a third node's agent
// does not answer. The collector must put each node's own counts side by side and name the gap.

// One port for every node (lc-audit takes one --agent-port), picked free rather than fixed: a fixed
// port met another run's agents (or their orphans) and this file then hung in its teardown.
const PORT = await freePort("127.0.0.41");
const nodes = [
  { name: "node-1", ip: "127.0.0.41" },
  { name: "node-2", ip: "127.0.0.42" },
  { name: "node-3", ip: "127.0.0.43" },
];

function startAgent(name: string, ip: string): Promise<() => Promise<void>> {
  const empty = mkdtempSync(join(tmpdir(), "proxyscope-lc-"));
  t.teardown(() => rmSync(empty, { recursive: true, force: true }));
  const child = spawnOwned(
    process.execPath,
    [
      AGENT_CLI,
      "serve",
      "--node",
      name,
      "--listen",
      ip,
      "--port",
      String(PORT),
      "--proc-root",
      join(REPO_ROOT, "test/fixtures/ipvs/lc-audit", name, "proc"),
      "--sys-root",
      join(empty, "sys"),
      "--host-root",
      empty,
      "--tool-dir",
      empty,
      "--kube-proxy-metrics-url",
      "http://127.0.0.1:9",
      "--kube-proxy-health-url",
      "http://127.0.0.1:9",
      "--log-level",
      "error",
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  // Started is /healthz answering, or the agent's exit: not a count of tries a loaded machine can use up.
  return new Promise((resolve, reject) => {
    let exited = false;
    child.once("exit", (code) => {
      exited = true;
      reject(new Error(`agent ${name} exited ${code} before it answered`));
    });
    const poll = () =>
      fetch(`http://${ip}:${PORT}/healthz`).then(
        () => resolve(() => stopOwned(child)),
        () => (exited ? undefined : setTimeout(poll, 100)),
      );
    poll();
  });
}

const api = await startApiServer({
  nodes: nodes.map((n) =>
    node({ name: n.name, kernel: "6.1.176", osImage: "Debian GNU/Linux 12 (bookworm)", ip: n.ip }),
  ),
  pods: nodes.map((n, i) => agentPod(n.name, n.ip, i)),
});
t.teardown(api.stop);
const stops = await Promise.all(nodes.slice(0, 2).map((n) => startAgent(n.name, n.ip)));
t.teardown(() => Promise.all(stops.map((s) => s())));

const r = await collector(["lc-audit", ...fleetFlags(api.kubeconfig, PORT), "--service", "prod/api"]);
t.equal(r.code, 0, r.stderr);
const lines = r.stdout.split("\n");
t.match(lines[0], /^Service prod\/api {2}10\.107\.44\.9:8080\/TCP {2}scheduler: lc$/);
const row = (endpoint: string) =>
  lines
    .find((l) => l.trimStart().startsWith(endpoint))
    ?.trim()
    .split(/\s+/);
t.same(
  lines
    .find((l) => l.trimStart().startsWith("ENDPOINT"))
    ?.trim()
    .split(/\s+/),
  ["ENDPOINT", "node-1", "node-2"],
  "one column per node that answered",
);
t.same(row("10.244.1.7:8080"), ["10.244.1.7:8080", "1/1", "1/0"], "each node's own active/inactive counts");
t.same(row("10.244.2.4:8080"), ["10.244.2.4:8080", "2/1", "1/0"]);
t.match(r.stdout, /node-3: .*(ECONNREFUSED|unreachable)/, "the node whose agent did not answer is named");
t.match(r.stdout, /The nodes' counts disagree/, "and the point of the audit is made");
