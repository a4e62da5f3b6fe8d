// Helpers for the collector's end-to-end tests: the API server stand-in, agents on loopback (serving
// NodeReports made by the real agent), and the collector CLI as a child process.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Test } from "tap";
import { buildReport } from "../../agent/assemble/report.js";
import { fleetDigestOf } from "../../agent/contract.js";
import { NodeReport, type NodeFacts } from "../../agent/report/schema.js";
import { startStandin, AGENT_CLI } from "../helpers/standin.js";
import { REPO_ROOT } from "../helpers/uml.js";
import { spawnOwned, stopOwned } from "../helpers/children.js";

export const COLLECTOR_CLI = join(REPO_ROOT, "dist/collector/cli.js");
export const APISERVER = join(REPO_ROOT, "dist/test/standins/apiserver.js");
const FIX = join(REPO_ROOT, "test/fixtures/kubernetes");

/**
 * The collector's `serve` inside network namespace `ns`, on every address there, with `args` after
 * the listen ones; stopped at teardown. Resolves once it says where it serves (with `gathered`, once
 * its first gather is in too), with its port and its stderr lines until then.
 */
export async function serveCollectorIn(
  t: Test,
  ns: string,
  args: string[],
  opts: { gathered?: boolean } = {},
): Promise<{ port: number; lines: string[] }> {
  const child = spawnOwned(
    "ip",
    [
      "netns",
      "exec",
      ns,
      process.execPath,
      COLLECTOR_CLI,
      "serve",
      "--listen",
      "0.0.0.0",
      "--port",
      "0",
    ].concat(args),
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  t.teardown(() => stopOwned(child));
  const lines: string[] = [];
  let port = 0;
  for await (const line of createInterface({ input: child.stderr! })) {
    lines.push(line);
    const serving = /serving on .*:(\d+)$/.exec(line);
    if (serving) port = Number(serving[1]);
    if (opts.gathered && /gather failed/.test(line)) throw new Error(line);
    if (port !== 0 && (!opts.gathered || /gathered 1 nodes/.test(line))) break;
  }
  // Read on, unread: a full pipe would stop it.
  child.stderr!.resume();
  if (port === 0) throw new Error(`the collector never said where it serves: ${lines.join(" | ")}`);
  return { port, lines };
}
export const fixture = <T = unknown>(name: string): T =>
  JSON.parse(readFileSync(join(FIX, name), "utf8")) as T;

export interface NodeSpec {
  name: string;
  kernel: string;
  osImage: string;
  labels?: Record<string, string>;
  ip?: string;
}

/** A Node object from the recorded-shape template with this node's name, kernel, OS and labels. */
export function node(spec: NodeSpec): object {
  const n = structuredClone(fixture<Record<string, any>>("node.template.json")); // eslint-disable-line @typescript-eslint/no-explicit-any
  n.metadata.name = spec.name;
  n.metadata.uid = `uid-${spec.name.length}-${Buffer.from(spec.name).toString("hex").slice(0, 16)}`;
  n.metadata.labels = { ...n.metadata.labels, "kubernetes.io/hostname": spec.name, ...(spec.labels ?? {}) };
  n.status.nodeInfo.kernelVersion = spec.kernel;
  n.status.nodeInfo.osImage = spec.osImage;
  n.status.addresses = [
    { type: "InternalIP", address: spec.ip ?? "192.168.4.21" },
    { type: "Hostname", address: spec.name },
  ];
  return n;
}

/** An agent pod (host network: the pod IP is where the agent listens) on a node. */
export function agentPod(nodeName: string, ip: string, i: number): object {
  return {
    kind: "Pod",
    apiVersion: "v1",
    metadata: {
      name: `proxyscope-agent-${i}`,
      namespace: "proxyscope",
      labels: { "app.kubernetes.io/name": "proxyscope-agent" },
    },
    spec: { nodeName, hostNetwork: true, containers: [{ name: "agent", image: "proxyscope:dev" }] },
    status: { phase: "Running", podIP: ip, podIPs: [{ ip }], hostIP: ip },
  };
}

export interface ClusterSpec {
  nodes: object[];
  pods: object[];
  configMaps?: object[];
  daemonSets?: object[];
  services?: object[];
  /** discovery.k8s.io/v1 EndpointSlices (test/standins/apiserver.ts). */
  endpointSlices?: object[];
  version?: object;
  forbidden?: string[];
  /** Per resource (nodes, pods, services, daemonsets, configmaps/NAME, version): a status or "hang". */
  faults?: Record<string, number | "hang">;
  /** Pod IP -> the loopback address standing for it, for the pod proxy (only the API server reaches pods). */
  podNetwork?: Record<string, string>;
}

export interface RunningApi {
  kubeconfig: string;
  url: string;
  stop(): Promise<void>;
}

export async function startApiServer(
  spec: ClusterSpec,
  token = "stand-in-token",
  netns?: string,
): Promise<RunningApi> {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-api-"));
  const file = join(dir, "cluster.json");
  writeFileSync(
    file,
    JSON.stringify({
      token,
      version: spec.version ?? fixture("version.json"),
      nodes: spec.nodes,
      pods: spec.pods,
      configMaps: spec.configMaps ?? [
        fixture("kube-proxy-configmap.kubeadm-ipvs.json"),
        fixture("kubeadm-config.json"),
      ],
      daemonSets: spec.daemonSets ?? [fixture("kube-proxy-daemonset.kubeadm.json")],
      services: spec.services ?? fixture("services.json"),
      endpointSlices: spec.endpointSlices ?? [],
      forbidden: spec.forbidden ?? [],
      faults: spec.faults ?? {},
      podNetwork: spec.podNetwork ?? {},
    }),
  );
  const argv = [...(netns ? ["ip", "netns", "exec", netns] : []), process.execPath, APISERVER, file];
  const child = spawnOwned(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /ready (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (c) => reject(new Error(`apiserver stand-in exited ${c}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const kubeconfig = writeKubeconfig(dir, url, token);
  return {
    kubeconfig,
    url,
    stop: async () => {
      await new Promise<void>((r) => {
        child.once("exit", () => r());
        child.kill("SIGTERM");
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function writeKubeconfig(dir: string, server: string, token: string): string {
  const path = join(dir, "kubeconfig");
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: stand-in
  cluster:
    server: ${server}
    # The stand-in speaks plain HTTP on loopback; the client refuses http:// without this.
    insecure-skip-tls-verify: true
contexts:
- name: stand-in
  context:
    cluster: stand-in
    user: collector
current-context: stand-in
users:
- name: collector
  user:
    token: ${token}
`,
  );
  return path;
}

/** The agent flags that point it at a fixture node: this /proc, the recorded host files, no tools, the stand-in. */
function fixtureNodeFlags(
  root: string,
  kp: { metricsUrl: string; healthUrl: string },
  toolDir = join(root, "no-tools"),
): string[] {
  return [
    "--proc-root",
    join(root, "proc"),
    "--host-root",
    join(REPO_ROOT, "test/fixtures/host"),
    "--sys-root",
    join(root, "sys"),
    "--tool-dir",
    toolDir,
    "--kube-proxy-metrics-url",
    kp.metricsUrl,
    "--kube-proxy-health-url",
    kp.healthUrl,
  ];
}
/** What the real agent prints for `scan --json` on a node with this kernel and kube-proxy in this mode. */
export async function realScan(
  nodeName: string,
  kernel: string,
  mode: "ipvs" | "iptables" | "nftables" | "",
): Promise<string> {
  const kp = await startStandin({ mode, version: "v1.37.1" });
  const root = mkdtempSync(join(tmpdir(), "proxyscope-proc-"));
  try {
    mkdirSync(join(root, "proc/sys/kernel"), { recursive: true });
    writeFileSync(join(root, "proc/sys/kernel/osrelease"), `${kernel}\n`);
    const { code, stdout, stderr } = await run(process.execPath, [
      AGENT_CLI,
      "scan",
      "--json",
      "--node",
      nodeName,
      ...fixtureNodeFlags(root, kp),
    ]);
    if (code !== 0 && code !== 1) throw new Error(`agent scan exited ${code}: ${stderr}`);
    return stdout;
  } finally {
    await kp.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * A node whose kube-ipvs0 survived the switch to nftables with addresses on it: the agent's own rules
 * judge these facts (the kube-ipvs0 probe needs a real dummy link, i.e. User-Mode Linux).
 */
export function blackHoleReport(nodeName: string, facts: Partial<NodeFacts>): string {
  const now = new Date();
  const runs = [
    { name: "kernel" as const, outcome: { ok: true as const, facts: facts.kernel }, durationMs: 1 },
    { name: "kube-ipvs0" as const, outcome: { ok: true as const, facts: facts.kubeIpvs0 }, durationMs: 1 },
    { name: "ipvs" as const, outcome: { ok: true as const, facts: facts.ipvs }, durationMs: 1 },
    {
      name: "kube-proxy-mode" as const,
      outcome: { ok: true as const, facts: facts.proxyMode },
      durationMs: 1,
    },
  ];
  return JSON.stringify(
    buildReport(runs, { node: nodeName, agentVersion: "0.1.0", startedAt: now, finishedAt: now }),
  );
}

export type AgentBehaviour =
  | { report: string }
  | { garbage: string }
  | { status: number }
  | { hang: true }
  /** Headers and the body's first bytes at once, then nothing, ever: the collector's deadline must end it. */
  | { stall: string }
  /** A 200 with a body of this many bytes (past the collector's cap). */
  | { hugeBytes: number };

/**
 * A tiny loopback server answering /report the way an agent would (or would not). By default it is an
 * agent older than /report/fleet (404 there, as a real one answers); `current` also answers
 * /report/fleet, with the agent's own digest of a report and any fault the same on both routes.
 */
export async function startAgent(
  ip: string,
  port: number,
  b: AgentBehaviour,
  { current = false } = {},
): Promise<() => Promise<void>> {
  const huge = "hugeBytes" in b ? Buffer.from(`{"pad":"${"x".repeat(b.hugeBytes)}"}`) : null;
  const fleetBody = (body: string) => {
    try {
      const r = NodeReport.safeParse(JSON.parse(body));
      // Not a NodeReport (another version, garbage): what the agent sends, the same on both routes.
      return r.success ? JSON.stringify(fleetDigestOf(r.data)) : body;
    } catch {
      return body;
    }
  };
  const server = http.createServer((req, res) => {
    if ("hang" in b) return; // accept, never answer: the collector's deadline must end it
    const fleet = current && req.url === "/report/fleet";
    if (req.url !== "/report" && !fleet) {
      res.writeHead(404).end();
      return;
    }
    if ("status" in b) return res.writeHead(b.status, { "content-type": "application/json" }).end("{}");
    res.writeHead(200, { "content-type": "application/json" });
    if ("hugeBytes" in b) return res.end(huge);
    if ("stall" in b) return void res.write(b.stall.slice(0, 10));
    const body = "report" in b ? b.report : b.garbage;
    res.end(fleet ? fleetBody(body) : body);
  });
  await new Promise<void>((r) => server.listen(port, ip, () => r()));
  return () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
}

export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawnOwned(cmd, args, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The collector CLI. These tests put agents on loopback pod IPs, which a real API server's pod proxy
 * refuses ("address not allowed"), so they take the direct path, as a collector in the cluster does;
 * test/e2e/collector-laptop.test.ts runs the proxy path (pass PROXYSCOPE_AGENT_ACCESS: "" for auto).
 */
/**
 * The collector's flags for a fleet in these tests: the API server stand-in's kubeconfig, the agents'
 * port, and a deadline a loaded machine meets (the default 5 s is not a wide margin at load 10).
 */
export const fleetFlags = (kubeconfig: string, agentPort: number, timeoutMs = 60_000): string[] => [
  "--kubeconfig",
  kubeconfig,
  "--agent-port",
  String(agentPort),
  "--timeout-ms",
  String(timeoutMs),
];

export const collector = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  run(process.execPath, [COLLECTOR_CLI, ...args], {
    NO_COLOR: "1",
    PROXYSCOPE_AGENT_ACCESS: "direct",
    ...env,
  });

export interface RealAgent {
  url: string;
  stop(): Promise<void>;
}

/**
 * A real `proxyscope-agent serve` process on a loopback address, scanning a fixture /proc (this
 * kernel) and a kube-proxy STAND-IN in this mode. Resolves once /readyz says the first scan is in.
 */
export async function startRealAgent(
  nodeName: string,
  ip: string,
  port: number,
  kernel: string,
  mode: "ipvs" | "iptables" | "nftables" | "",
  /** A tool dir instead of none, and flags added to `serve` (the parity snapshot's). */
  extra: { toolDir?: string; args?: string[] } = {},
): Promise<RealAgent> {
  const kp = await startStandin({ mode, version: "v1.37.1" });
  const root = mkdtempSync(join(tmpdir(), "proxyscope-proc-"));
  mkdirSync(join(root, "proc/sys/kernel"), { recursive: true });
  writeFileSync(join(root, "proc/sys/kernel/osrelease"), `${kernel}\n`);
  const child = spawnOwned(
    process.execPath,
    [
      AGENT_CLI,
      "serve",
      "--node",
      nodeName,
      "--listen",
      ip,
      "--port",
      String(port),
      ...fixtureNodeFlags(root, kp, extra.toolDir),
      ...(extra.args ?? []),
      "--scan-interval-s",
      "2",
      "--log-level",
      "error",
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const url = `http://${ip}:${port}`;
  // Ready is /readyz saying so (the first scan is in), or the agent's exit: no count of tries, which a
  // loaded machine can use up (20 s was the old cap, and the test then ran against a half-started agent).
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`agent ${nodeName} exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    stop: async () => {
      await new Promise<void>((r) => {
        if (child.exitCode !== null) return r();
        child.once("exit", () => r());
        child.kill("SIGTERM");
      });
      await kp.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
