// Fleet scale: the collector (`proxyscope report`, its own defaults) over N stand-in agents on
// loopback (row f), beside the floor of fetching every report once over plain HTTP; then the
// Prometheus source over a real Prometheus holding synthetic series for M nodes, backfilled with
// promtool (row g), beside the floor of the same PromQL queries sent straight to Prometheus.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { queries } from "../collector/sources/prometheus.js";
import { behaviour } from "./fleet/agents.js";

const log = (m: string) => process.stderr.write(`[fleet] ${m}\n`);
const PORT_BASE = 19100;
const PORTS = 16;
const CLOSED_PORT = 19099;
const REPS = 3;

export interface TimedRun {
  wallMs: number;
  cpuMs: number;
  maxRssMb: number;
  exit: number | null;
  stdout: string;
}

/** A command under GNU time, its stdout kept (the collector's JSON report). */
export function timedRun(argv: readonly string[]): TimedRun {
  const r = spawnSync("/usr/bin/time", ["-f", "@@TIME %e %U %S %M", ...argv], {
    encoding: "utf8",
    maxBuffer: 512 * 2 ** 20,
  });
  const m = /@@TIME (\S+) (\S+) (\S+) (\S+)/.exec(r.stderr ?? "");
  if (!m) throw new Error(`${argv.join(" ")}: no timing: ${(r.stderr ?? "").slice(-500)}`);
  return {
    wallMs: Number(m[1]) * 1000,
    cpuMs: (Number(m[2]) + Number(m[3])) * 1000,
    maxRssMb: Number(m[4]) / 1024,
    exit: r.status,
    stdout: r.stdout,
  };
}

export function fleetTargets(n: number): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const port = behaviour(i) === "down" ? CLOSED_PORT : PORT_BASE + (i % PORTS);
    lines.push(`node-${i} http://127.0.0.1:${port}/node-${i}`);
  }
  return lines.join("\n") + "\n";
}

async function startAgents(repo: string, reports: string[]): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [`${repo}/dist/bench/fleet/agents.js`, String(PORT_BASE), String(PORTS), ...reports],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const rl = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    rl.on("line", (l) => l === "ready" && resolve());
    child.once("exit", (c) => reject(new Error(`stand-in agents exited ${c}`)));
  });
  return child;
}

/** Node reports recorded by the node benchmark; a host scan when there are none. */
function sampleReports(repo: string, dir: string): string[] {
  const samples = `${repo}/bench/results/samples`;
  const found = existsSync(samples)
    ? readdirSync(samples)
        .filter((f) => f.endsWith(".report.json"))
        .map((f) => `${samples}/${f}`)
    : [];
  if (found.length > 0) return found;
  const r = spawnSync(process.execPath, [`${repo}/dist/agent/cli.js`, "scan", "--json"], {
    encoding: "utf8",
  });
  writeFileSync(`${dir}/host.report.json`, r.stdout);
  return [`${dir}/host.report.json`];
}

function outcomes(stdout: string): Record<string, number> {
  try {
    const doc = JSON.parse(stdout) as { nodes?: { outcome?: string; answered?: boolean }[] };
    const counts: Record<string, number> = {};
    for (const n of doc.nodes ?? []) {
      const k = String(n.outcome ?? n.answered ?? "?");
      counts[k] = (counts[k] ?? 0) + 1;
    }
    return counts;
  } catch {
    return { unparsable: 1 };
  }
}

/** The metric families the collector's Prometheus source queries (only those are synthesised). */
export function queriedFamilies(): Set<string> {
  return new Set(Object.values(queries("node")).flatMap((q) => q.match(/proxyscope_\w+/g) ?? []));
}

/**
 * OpenMetrics for promtool: the proxyscope_* families of a real agent's /metrics (only `keep`'s, when
 * given), per node.
 */
export function fleetOpenMetrics(exposition: string, n: number, nowS: number, keep?: Set<string>): string {
  const families = new Map<string, { type: string; help: string; samples: string[] }>();
  let current = "";
  for (const line of exposition.split("\n")) {
    const t = /^# TYPE (\S+) (\S+)/.exec(line);
    if (t) {
      current = t[1]!;
      families.set(current, { type: t[2]!, help: "", samples: [] });
      continue;
    }
    if (line === "" || line.startsWith("#") || !current.startsWith("proxyscope_")) continue;
    families.get(current)?.samples.push(line);
  }
  const out: string[] = [];
  for (const [name, f] of families) {
    if (!name.startsWith("proxyscope_") || (keep && !keep.has(name))) continue;
    // OpenMetrics counters are named without _total in TYPE lines.
    const family = f.type === "counter" ? name.replace(/_total$/, "") : name;
    out.push(`# TYPE ${family} ${f.type === "untyped" ? "unknown" : f.type}`);
    for (let i = 0; i < n; i++) {
      const node = `node="node-${i}",job="proxyscope",instance="10.0.${i >> 8}.${i & 255}:9977"`;
      for (const s of f.samples) {
        const m = /^(\w+)(?:\{(.*)\})? (\S+)/.exec(s);
        if (!m) continue;
        const labels = m[2] ? `${node},${m[2]}` : node;
        const value = m[1] === "proxyscope_last_scan_timestamp_seconds" ? String(nowS - 90) : m[3];
        for (const ts of [nowS - 150, nowS - 90]) out.push(`${m[1]}{${labels}} ${value} ${ts}`);
      }
    }
  }
  out.push("# EOF");
  return out.join("\n") + "\n";
}

// The Prometheus source also lists Nodes from the API (every node the API lists is reported); the
// collector's API server stand-in and its recorded objects serve that, when they are present.
async function startApi(
  repo: string,
  n: number,
  dir: string,
): Promise<{ kubeconfig: string; child: ChildProcess } | string> {
  const standin = `${repo}/dist/test/standins/apiserver.js`;
  const fx = `${repo}/test/fixtures/kubernetes`;
  if (!existsSync(standin) || !existsSync(`${fx}/node.template.json`))
    return "the API server stand-in is not built";
  const f = (name: string) => JSON.parse(readFileSync(`${fx}/${name}`, "utf8")) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const template = f("node.template.json");
  const nodes = Array.from({ length: n }, (_, i) => {
    const o = structuredClone(template);
    o.metadata.name = `node-${i}`;
    o.metadata.uid = `uid-node-${i}`;
    o.metadata.labels = { ...o.metadata.labels, "kubernetes.io/hostname": `node-${i}` };
    o.status.addresses = [{ type: "InternalIP", address: `10.0.${i >> 8}.${i & 255}` }];
    return o;
  });
  const token = "bench-token";
  writeFileSync(
    `${dir}/cluster.json`,
    JSON.stringify({
      token,
      version: f("version.json"),
      nodes,
      pods: [],
      configMaps: [f("kube-proxy-configmap.kubeadm-ipvs.json"), f("kubeadm-config.json")],
      daemonSets: [f("kube-proxy-daemonset.kubeadm.json")],
      services: f("services.json"),
      forbidden: [],
    }),
  );
  const child = spawn(process.execPath, [standin, `${dir}/cluster.json`], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /ready (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (c) => reject(new Error(`apiserver stand-in exited ${c}`)));
  });
  const kubeconfig = `${dir}/kubeconfig`;
  writeFileSync(
    kubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: stand-in",
      "  cluster:",
      `    server: http://127.0.0.1:${port}`,
      "    insecure-skip-tls-verify: true",
      "contexts:",
      "- name: stand-in",
      "  context: { cluster: stand-in, user: collector }",
      "current-context: stand-in",
      "users:",
      "- name: collector",
      `  user: { token: ${token} }`,
      "",
    ].join("\n"),
  );
  return { kubeconfig, child };
}

async function prometheusSource(repo: string, n: number, dir: string): Promise<Record<string, unknown>> {
  const api = await startApi(repo, n, dir);
  if (typeof api === "string") return { skipped: api };
  try {
    return await prometheusWithApi(repo, n, dir, api.kubeconfig);
  } finally {
    api.child.kill("SIGTERM");
  }
}

async function prometheusWithApi(
  repo: string,
  n: number,
  dir: string,
  kubeconfig: string,
): Promise<Record<string, unknown>> {
  const samples = `${repo}/bench/results/samples`;
  const metrics = existsSync(samples) ? readdirSync(samples).filter((f) => f.endsWith(".metrics.txt")) : [];
  if (metrics.length === 0) return { skipped: "no recorded agent /metrics (run the node benchmark first)" };
  const exposition = readFileSync(`${samples}/${metrics.sort()[0]}`, "utf8");
  const nowS = Math.floor(Date.now() / 1000);
  const om = `${dir}/fleet.om`;
  const keep = queriedFamilies();
  writeFileSync(om, fleetOpenMetrics(exposition, n, nowS, keep));
  const tsdb = `${dir}/tsdb`;
  const t0 = performance.now();
  const b = spawnSync("promtool", ["tsdb", "create-blocks-from", "openmetrics", om, tsdb], {
    encoding: "utf8",
  });
  if (b.status !== 0) return { error: `promtool: ${(b.stderr ?? "").slice(-500)}` };
  const backfillMs = performance.now() - t0;
  writeFileSync(`${dir}/prometheus.yml`, "global:\n  scrape_interval: 1h\n");
  const prom = spawn(
    "prometheus",
    [
      `--config.file=${dir}/prometheus.yml`,
      `--storage.tsdb.path=${tsdb}`,
      "--web.listen-address=127.0.0.1:19090",
      "--storage.tsdb.retention.time=30d",
    ],
    { stdio: ["ignore", "ignore", "ignore"] },
  );
  try {
    const end = Date.now() + 120_000;
    for (;;) {
      const r = spawnSync("curl", ["-sf", "http://127.0.0.1:19090/-/ready"]);
      if (r.status === 0) break;
      if (Date.now() > end) return { error: "prometheus never got ready" };
      await new Promise((r) => setTimeout(r, 500));
    }
    const series = Number(
      JSON.parse(
        spawnSync(
          "curl",
          [
            "-s",
            `http://127.0.0.1:19090/api/v1/query?query=${encodeURIComponent('count({job="proxyscope"})')}`,
          ],
          {
            encoding: "utf8",
          },
        ).stdout,
      ).data.result[0]?.value[1] ?? "NaN",
    );
    // The floor: the collector's own PromQL, all at once as it sends them, answers read and dropped.
    const floor: number[] = [];
    for (let k = 0; k < REPS; k++) {
      const t1 = performance.now();
      await Promise.all(
        Object.values(queries("node")).map(async (q) => {
          const r = await fetch(`http://127.0.0.1:19090/api/v1/query?query=${encodeURIComponent(q)}`);
          await r.arrayBuffer();
        }),
      );
      floor.push(performance.now() - t1);
    }
    log(
      `prometheus floor (${Object.keys(queries("node")).length} queries): ${floor.map((f) => f.toFixed(0)).join(" ")} ms`,
    );
    const runs: Omit<TimedRun, "stdout">[] = [];
    let counts: Record<string, number> = {};
    for (let k = 0; k < REPS; k++) {
      const r = timedRun([
        process.execPath,
        `${repo}/dist/collector/cli.js`,
        "report",
        "--source",
        "prometheus",
        "--prometheus-url",
        "http://127.0.0.1:19090",
        "--kubeconfig",
        kubeconfig,
        "--output",
        "json",
      ]);
      counts = outcomes(r.stdout);
      const { stdout: _s, ...rest } = r;
      runs.push(rest);
      log(
        `prometheus source, ${n} nodes: ${r.wallMs.toFixed(0)} ms, ${r.maxRssMb.toFixed(0)} MB (exit ${r.exit})`,
      );
    }
    return { nodes: n, series, families: [...keep], backfillMs, floorMs: floor, runs, outcomes: counts };
  } finally {
    prom.kill("SIGTERM");
    await new Promise((r) => prom.once("exit", r));
  }
}

export async function runFleet(
  sizes: number[],
  repo: string,
  promNodes: number,
): Promise<Record<string, unknown>> {
  const dir = mkdtempSync("/var/tmp/proxyscope-fleet-");
  const out: Record<string, unknown> = {};
  try {
    const reports = sampleReports(repo, dir);
    out.reportBytes = reports.map((f) => readFileSync(f).length);
    const agents = await startAgents(repo, reports);
    try {
      for (const n of sizes) {
        const file = `${dir}/targets-${n}`;
        writeFileSync(file, fleetTargets(n));
        const runs: Omit<TimedRun, "stdout">[] = [];
        let counts: Record<string, number> = {};
        for (let k = 0; k < REPS; k++) {
          const r = timedRun([
            process.execPath,
            `${repo}/dist/collector/cli.js`,
            "report",
            "--source",
            "static",
            "--agents-file",
            file,
            "--output",
            "json",
          ]);
          counts = outcomes(r.stdout);
          const { stdout: _s, ...rest } = r;
          runs.push(rest);
          log(`agents, ${n} nodes: ${r.wallMs.toFixed(0)} ms, ${r.maxRssMb.toFixed(0)} MB (exit ${r.exit})`);
        }
        const floorRuns: Omit<TimedRun, "stdout">[] = [];
        let floorOut: unknown = null;
        for (let k = 0; k < REPS; k++) {
          const r = timedRun([
            process.execPath,
            `${repo}/dist/bench/fleet/fetch-floor.js`,
            file,
            "32",
            "5000",
          ]);
          const { stdout, ...rest } = r;
          floorOut = JSON.parse(stdout.trim() || "null");
          floorRuns.push(rest);
          log(`fetch floor, ${n} nodes: ${r.wallMs.toFixed(0)} ms, ${r.maxRssMb.toFixed(0)} MB`);
        }
        const mix: Record<string, number> = {};
        for (let i = 0; i < n; i++) mix[behaviour(i)] = (mix[behaviour(i)] ?? 0) + 1;
        out[`agents-${n}`] = {
          nodes: n,
          concurrency: 32,
          timeoutMs: 5000,
          mix,
          runs,
          outcomes: counts,
          floor: floorRuns,
          floorOutcome: floorOut,
        };
      }
    } finally {
      agents.kill("SIGTERM");
    }
    if (promNodes > 0) out[`prometheus-${promNodes}`] = await prometheusSource(repo, promNodes, dir);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
