// Fleet scale: the collector (`proxyscope report`, its own defaults) over N stand-in agents on
// loopback (row f), beside the floor of fetching every agent's FleetDigest (/report/fleet, what the
// collector asks) once over plain HTTP, and the old floor of every whole /report; with an old build's
// dist (--fleet-old-dist) that collector runs too, alternating with this one, rep by rep. Then the
// Prometheus source over a real Prometheus holding synthetic series for M nodes, backfilled with
// promtool (row g, bench/fleet/prometheus.ts).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { createInterface } from "node:readline";
import { defaultAgentCalls } from "../collector/sources/kubernetes/index.js";
import { behaviour } from "./fleet/agents.js";
import { prometheusRow } from "./fleet/prometheus.js";
import { timedRun, type TimedRun } from "./lib/timed-run.js";

const log = (m: string) => process.stderr.write(`[fleet] ${m}\n`);
const PORT_BASE = 19100;
const PORTS = 16;
const CLOSED_PORT = 19099;
const REPS = 3;
// The collector's own default for a static list (straight to the agents); the floor holds as many.
const CALLS = defaultAgentCalls(true);

function fleetTargets(n: number): string {
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

type Run = Omit<TimedRun, "stdout"> & { load1: number; outcomes?: Record<string, number> };

export async function runFleet(
  sizes: number[],
  repo: string,
  promNodes: number,
  /** An older build's dist/ (its collector reads /report): run it alternating with this one. */
  oldDist?: string,
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
        const collectorRun = (dist: string, label: string): Run => {
          const load1 = loadavg()[0]!;
          const r = timedRun([
            process.execPath,
            `${dist}/collector/cli.js`,
            "report",
            "--source",
            "static",
            "--agents-file",
            file,
            "--output",
            "json",
          ]);
          const { stdout, ...rest } = r;
          log(
            `${label}, ${n} nodes: ${r.wallMs.toFixed(0)} ms, ${r.cpuMs.toFixed(0)} ms CPU, ${r.maxRssMb.toFixed(0)} MB (exit ${r.exit}, load ${load1.toFixed(1)})`,
          );
          return { ...rest, load1, outcomes: outcomes(stdout) };
        };
        const floorRun = (path: string): Run & { fetched: unknown } => {
          const load1 = loadavg()[0]!;
          const r = timedRun([
            process.execPath,
            `${repo}/dist/bench/fleet/fetch-floor.js`,
            file,
            String(CALLS),
            "5000",
            path,
          ]);
          const { stdout, ...rest } = r;
          log(`fetch floor ${path}, ${n} nodes: ${r.wallMs.toFixed(0)} ms, ${r.cpuMs.toFixed(0)} ms CPU`);
          return { ...rest, load1, fetched: JSON.parse(stdout.trim() || "null") };
        };
        const runs: Run[] = [];
        const oldRuns: Run[] = [];
        const floor: ReturnType<typeof floorRun>[] = [];
        const reportFloor: ReturnType<typeof floorRun>[] = [];
        // Alternating, so the machine's load falls on old and new alike.
        for (let k = 0; k < REPS; k++) {
          if (oldDist) oldRuns.push(collectorRun(oldDist, "old collector"));
          runs.push(collectorRun(`${repo}/dist`, "agents"));
          floor.push(floorRun("/report/fleet"));
          reportFloor.push(floorRun("/report"));
        }
        const mix: Record<string, number> = {};
        for (let i = 0; i < n; i++) mix[behaviour(i)] = (mix[behaviour(i)] ?? 0) + 1;
        out[`agents-${n}`] = {
          nodes: n,
          concurrency: CALLS,
          timeoutMs: 5000,
          mix,
          runs,
          outcomes: runs.at(-1)?.outcomes ?? {},
          // The least work that answers: every agent's FleetDigest fetched once, bodies dropped.
          floor,
          floorPath: "/report/fleet",
          floorOutcome: floor.at(-1)?.fetched ?? null,
          // What the floor was while the collector read whole reports.
          reportFloor,
          ...(oldDist ? { oldDist, oldRuns } : {}),
        };
      }
    } finally {
      agents.kill("SIGTERM");
    }
    if (promNodes > 0) out[`prometheus-${promNodes}`] = await prometheusRow(repo, promNodes, dir);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
