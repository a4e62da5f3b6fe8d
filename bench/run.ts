// `npm run bench`: the agent-cost targets, one row each, every baseline measured in the same run. How to
// run it, its flags and phases: USAGE, which --help prints.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { loadavg } from "node:os";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { runFleet } from "./fleet.js";
import { benchArgs, count, usageError } from "./lib/args.js";
import { IPVS_GUEST_MODULES, ipvsGuestAdd, ipvsGuestBase } from "./lib/ipvs-guest.js";
import { BenchNetns } from "./lib/netns.js";
import { bootUmlBench } from "./lib/uml.js";
import { machine } from "./lib/machine.js";
import { renderMarkdown } from "./report.js";

const USAGE = `\
Usage: npm run bench -- [flags]
       node dist/bench/run.js [flags]
       scripts/bench.sh [flags]     (as root on Debian: installs what it needs and builds first)
The agent-cost targets, one row each, every baseline measured in the same run. Writes
bench/results/<stamp>.json, latest.json and latest.md (the README's table).
  --only nft,ipvs,fleet   the phases to run (default: all three)
  --quick                 1,000 Services, 500 / 5,000 nodes, 100 RSS scans
  --services N            Services in both modes (default 10,000)
  --reps K                scans and floor runs at that size (default 3)
  --fleet-nodes N         row (f)'s stand-in agents (default 5,000)
  --prom-nodes M          row (g)'s Prometheus nodes (default 50,000; 0: none)
  --scan-only             rows (b) and (c) alone: scans and floor, no serve windows
  --fleet-old-dist DIR    an older build's collector, alternating with this one (row f before/after)
  --name X                write bench/results/X.{json,md} instead of latest.*
Phases:
  nft    a network namespace on the host: kube-proxy's nftables table at N Services; scans, the new
         floor, \`serve\` at defaults beside node_exporter (a), /metrics and /report while scans run
         back to back with the event-loop delay (d), RSS after each of K scans (e).
  ipvs   one User-Mode Linux boot, ipvs-mode state at N; scans, the ipvs floor and
         \`cat /proc/net/ip_vs\` (c), (a) and (d) again.
  fleet  the collector over stand-in agents on loopback (f), and its Prometheus source over a real
         Prometheus holding synthetic series for many more nodes (g).`;
const PHASES = ["nft", "ipvs", "fleet"];

const REPO = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const DIST = `${REPO}/dist`;
const RESULTS = `${REPO}/bench/results`;
const ENDPOINTS = 10;
const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);

interface Plan {
  /** Services in both modes (the targets are set at 10,000). */
  services: number;
  /** Scans and floor runs at that size. */
  reps: number;
  /** Row (a): seconds of `serve` at default settings, scaled to an hour. */
  cpuHourS: number;
  /** Row (d): seconds of clients while scans run back to back (0: none). */
  loadS: number;
  /** Row (e): scans whose RSS is sampled, nftables mode (the dearer). */
  rssScans: number;
  fleetNodes: number;
  promNodes: number;
}

const FULL: Plan = {
  services: 10000,
  reps: 3,
  cpuHourS: 600,
  loadS: 30,
  rssScans: 1000,
  fleetNodes: 5000,
  promNodes: 50000,
};
const QUICK: Plan = {
  services: 1000,
  reps: 3,
  cpuHourS: 120,
  loadS: 10,
  rssScans: 100,
  fleetNodes: 500,
  promNodes: 5000,
};

/** The report and /metrics the node benchmark recorded: the fleet benchmark serves them. */
function keepSamples(file: string, label: string): void {
  for (const ext of ["report.json", "metrics.txt"]) {
    if (existsSync(`${file}.${ext}`))
      spawnSync("cp", [`${file}.${ext}`, `${RESULTS}/samples/${label}.${ext}`]);
  }
}

async function ipvsPhase(plan: Plan): Promise<Record<string, unknown>> {
  const work = mkdtempSync("/var/tmp/proxyscope-bench-");
  try {
    const steps: string[] = [];
    for (const n of [plan.services]) {
      steps.push(ipvsGuestAdd(work, 0, n, ENDPOINTS));
      steps.push(`node ${DIST}/bench/node/node-bench.js --out "$W/ipvs-${n}.json" --label ipvs-${n} --reps ${plan.reps} \\
  --floor ipvs --cpu-hour-s ${plan.cpuHourS} --load-s ${plan.loadS} \\
  ${n === 10000 ? `--profile "$W/prof-ipvs-${n}"` : ""}
`);
    }
    const script = ipvsGuestBase(work, REPO) + steps.join("");
    const mods = IPVS_GUEST_MODULES;
    log(`ipvs: one UML boot (${plan.services} Services x ${ENDPOINTS}); work dir ${work}`);
    const boot = await bootUmlBench({
      repoRoot: REPO,
      workDir: work,
      script,
      memMb: 3072,
      timeoutMs: 40 * 60_000,
      modules: mods,
      consoleLog: `${work}/console.log`,
    });
    log(`ipvs: guest finished rc=${boot.exitCode} in ${(boot.durationMs / 1000).toFixed(0)} s`);
    const out: Record<string, unknown> = { bootMs: boot.durationMs, exitCode: boot.exitCode };
    for (const n of [plan.services]) {
      const f = `${work}/ipvs-${n}.json`;
      if (existsSync(f)) out[n] = JSON.parse(readFileSync(f, "utf8"));
      keepSamples(f, `ipvs-${n}`);
    }
    const prof = `${work}/prof-ipvs-10000`;
    if (existsSync(prof)) {
      mkdirSync(`${RESULTS}/profiles`, { recursive: true });
      spawnSync("cp", ["-r", prof, `${RESULTS}/profiles/`]);
    }
    return out;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function nftPhase(plan: Plan): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const n of [plan.services]) {
    const ns = BenchNetns.create(`pxbench-nft-${n}`);
    try {
      const load = ns.loadNftablesMode(n, ENDPOINTS, REPO);
      log(`nft: N=${n} loaded in ${(load.ms / 1000).toFixed(1)} s`);
      const file = `/var/tmp/pxbench-nft-${n}.json`;
      const args = [
        `${DIST}/bench/node/node-bench.js`,
        "--out",
        file,
        "--label",
        `nft-${n}`,
        "--reps",
        String(plan.reps),
        "--floor",
        "nft",
        "--cpu-hour-s",
        String(plan.cpuHourS),
        "--load-s",
        String(plan.loadS),
        "--rss-scans",
        String(plan.rssScans),
        ...(n === 10000 ? ["--profile", `${RESULTS}/profiles/prof-nft-${n}`] : []),
      ];
      const r = spawnSync("ip", ["netns", "exec", ns.name, process.execPath, ...args], {
        stdio: ["ignore", "inherit", "inherit"],
      });
      if (r.status !== 0) log(`nft: N=${n} node-bench exited ${r.status}`);
      if (existsSync(file)) {
        out[n] = { ...JSON.parse(readFileSync(file, "utf8")), loadMs: load.ms };
        keepSamples(file, `nft-${n}`);
        rmSync(file);
      }
    } finally {
      ns.destroy();
    }
  }
  return out;
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    options: {
      only: { type: "string", default: "nft,ipvs,fleet" },
      quick: { type: "boolean", default: false },
      services: { type: "string" },
      "scan-only": { type: "boolean", default: false },
      reps: { type: "string" },
      // Row (f)'s agents and row (g)'s Prometheus nodes (0: the Prometheus source is not run).
      "fleet-nodes": { type: "string" },
      "prom-nodes": { type: "string" },
      // Row (f) before/after: an older build's dist/, whose collector runs alternating with this one.
      "fleet-old-dist": { type: "string" },
      // Results under bench/results/NAME.json and NAME.md instead of latest.*.
      name: { type: "string", default: "latest" },
    },
  });
  const plan: Plan = { ...(values.quick ? QUICK : FULL) };
  if (values.services !== undefined) plan.services = count(values.services, "--services");
  if (values.reps !== undefined) plan.reps = count(values.reps, "--reps");
  if (values["fleet-nodes"] !== undefined) plan.fleetNodes = count(values["fleet-nodes"], "--fleet-nodes");
  if (values["prom-nodes"] !== undefined) plan.promNodes = count(values["prom-nodes"], "--prom-nodes");
  // Rows (b) and (c) alone: scans and floor, no serve windows.
  if (values["scan-only"]) Object.assign(plan, { cpuHourS: 0, loadS: 0, rssScans: 0 });
  const only = new Set(values.only.split(","));
  for (const p of only) if (!PHASES.includes(p)) usageError(`--only: no phase '${p}' (${PHASES.join(", ")})`);
  mkdirSync(`${RESULTS}/profiles`, { recursive: true });
  mkdirSync(`${RESULTS}/samples`, { recursive: true });
  const started = performance.now();
  const results: Record<string, unknown> = {
    machine: machine(),
    plan,
    quick: values.quick,
    only: [...only],
    endpointsPerService: ENDPOINTS,
    loadavg: { start: loadavg() },
  };
  const stamp = (results.machine as { date: string }).date.replace(/[:.]/g, "-");
  const save = () => {
    writeFileSync(`${RESULTS}/${stamp}.json`, JSON.stringify(results, null, 1));
    writeFileSync(`${RESULTS}/${values.name}.json`, JSON.stringify(results, null, 1));
    writeFileSync(`${RESULTS}/${values.name}.md`, renderMarkdown(results));
  };
  const phase = async (name: string, f: () => unknown) => {
    const l0 = loadavg();
    results[name] = await f();
    (results.loadavg as Record<string, unknown>)[name] = { start: l0, end: loadavg() };
    save();
  };
  if (only.has("nft")) await phase("nft", () => nftPhase(plan));
  if (only.has("ipvs")) await phase("ipvs", () => ipvsPhase(plan));
  if (only.has("fleet"))
    await phase("fleet", () => runFleet([plan.fleetNodes], REPO, plan.promNodes, values["fleet-old-dist"]));
  results.totalS = (performance.now() - started) / 1000;
  (results.loadavg as Record<string, unknown>).end = loadavg();
  save();
  log(`done in ${((performance.now() - started) / 60000).toFixed(1)} min: ${RESULTS}/${values.name}.md`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
