// Row (g): the collector's Prometheus source over a real Prometheus (Debian's 2.42) holding synthetic
// series for N nodes, backfilled with promtool from a real agent's /metrics, beside floors measured
// in the same run: the collector's own PromQL sent straight to Prometheus, and the least PromQL that
// answers the fleet report's questions.
//
// The series look like a Prometheus that scraped every agent every `stepS` (the ServiceMonitor's 60 s):
// samples from a minute before the data is written until `windowS` after, so an instant query at any
// moment of the measurement sees a sample under a minute old, as it would in a cluster. Backfilled
// blocks end in the past otherwise, and Prometheus's 5 min lookback makes every node no-data once the
// backfill outlasts it (what bench/results/latest.md measured at 5,000 nodes). Each run is checked:
// a measurement over series that went stale is an error, never a figure. How to run it on its own:
// USAGE, which --help prints (bench/fleet.ts runs it as row (g) of `npm run bench`).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BURN_DOWN_RANGE_S, BURN_DOWN_STEP_S } from "../../collector/gather/from-prometheus.js";
import { burnDownQuery, queries } from "../../collector/sources/prometheus.js";
import { timedRun, type TimedRun } from "../lib/timed-run.js";
import { benchArgs, count, usageError } from "../lib/args.js";
import {
  allowedCpus,
  busyOn,
  coreBusyMs,
  cpuCount,
  parsePinning,
  pinnedArgv,
  pinProcess,
  processCpuMs,
  type Pinning,
} from "./pinning.js";

const USAGE = `\
Usage: node dist/bench/fleet/prometheus.js [--nodes 5000] [--collector LABEL=DIST/collector/cli.js]...
         [--reps 3] [--tsdb DIR] [--window-s S] [--step-s 60] [--port 19090] [--piece-nodes N]
         [--pin PROM:CLIENT|none] [--max-load 2] [--out FILE]
Row (g): the collector's Prometheus source over a real Prometheus holding synthetic series for N
nodes, beside the floors of its PromQL. Prints the results as JSON (also to --out FILE).
  --collector  a build to measure (default: this one's); given more than once, the collectors are
               alternated rep by rep, each beside the floor of its own PromQL (read from the same dist)
  --tsdb       keep the backfill in DIR, or reuse it while its series are fresh
  --window-s   seconds the synthetic samples reach past their writing (default 1200 + 0.024 a node)
  --step-s     seconds between the synthetic scrapes
  --port       Prometheus's loopback port
  --pin        CPUs for Prometheus (with GOMAXPROCS set to their count) and for the client side: the
               collector, the floors' client (this process) and the API server stand-in (default 1:0
               on a machine of 2 or more CPUs, else none); each run records the CPU others took there
  --max-load   a run or floor starts only at a 1-minute load below this (it waits up to 2 min for one);
               one that started at or above it is left out of FILE.md's medians (rerun)
  --piece-nodes  backfill N nodes at a time (promtool holds its whole input's series in memory); Prometheus
               merges the pieces' blocks before anything is measured`;

const log = (m: string) => process.stderr.write(`[prom] ${m}\n`);

/** The metric families the collector's Prometheus source queries (only those are synthesised). */
export function queriedFamilies(): Set<string> {
  return new Set(Object.values(queries("node")).flatMap((q) => q.match(/proxyscope_\w+/g) ?? []));
}

/** The scrape times: every `stepS` from a minute before `fromS` until `windowS` after it. */
export function scrapeTimes(fromS: number, windowS: number, stepS: number): number[] {
  const out: number[] = [];
  for (let t = fromS - 60; t <= fromS + windowS; t += stepS) out.push(t);
  return out;
}

/**
 * OpenMetrics for promtool, written through `emit` in pieces (50,000 nodes are gigabytes): the
 * proxyscope_* families of a real agent's /metrics (only `keep`'s, when given), per node, one sample
 * per scrape time. The last-scan gauge reads a scan 30 s before each scrape, as a live agent's would.
 */
function emitFleetOpenMetrics(
  emit: (s: string) => void,
  exposition: string,
  n: number,
  times: readonly number[],
  keep?: Set<string>,
  /** The first node: a fleet backfilled in pieces writes nodes [from, n) here. */
  from = 0,
): void {
  const families = new Map<string, { type: string; samples: string[] }>();
  let current = "";
  for (const line of exposition.split("\n")) {
    const t = /^# TYPE (\S+) (\S+)/.exec(line);
    if (t) {
      current = t[1]!;
      families.set(current, { type: t[2]!, samples: [] });
      continue;
    }
    if (line === "" || line.startsWith("#") || !current.startsWith("proxyscope_")) continue;
    families.get(current)?.samples.push(line);
  }
  for (const [name, f] of families) {
    if (!name.startsWith("proxyscope_") || (keep && !keep.has(name))) continue;
    // OpenMetrics counters are named without _total in TYPE lines.
    const family = f.type === "counter" ? name.replace(/_total$/, "") : name;
    emit(`# TYPE ${family} ${f.type === "untyped" ? "unknown" : f.type}\n`);
    const parsed = f.samples.flatMap((s) => {
      const m = /^(\w+)(?:\{(.*)\})? (\S+)/.exec(s);
      return m ? [{ name: m[1]!, labels: m[2], value: m[3]! }] : [];
    });
    for (let i = from; i < n; i++) {
      const node = `node="node-${i}",job="proxyscope",instance="10.0.${i >> 8}.${i & 255}:9977"`;
      let chunk = "";
      for (const s of parsed) {
        const head = `${s.name}{${s.labels ? `${node},${s.labels}` : node}} `;
        const scanTime = s.name === "proxyscope_last_scan_timestamp_seconds";
        for (const ts of times) chunk += `${head}${scanTime ? ts - 30 : s.value} ${ts}\n`;
      }
      emit(chunk);
    }
  }
  emit("# EOF\n");
}

/** The same as one string (small fleets, tests). */
export function fleetOpenMetrics(
  exposition: string,
  n: number,
  times: readonly number[],
  keep?: Set<string>,
): string {
  let out = "";
  emitFleetOpenMetrics((s) => (out += s), exposition, n, times, keep);
  return out;
}

function writeOpenMetricsFile(
  path: string,
  exposition: string,
  [from, n]: [number, number],
  times: number[],
  keep: Set<string>,
) {
  const fd = openSync(path, "w");
  let buf = "";
  try {
    emitFleetOpenMetrics(
      (s) => {
        buf += s;
        if (buf.length > 4 << 20) {
          writeSync(fd, buf);
          buf = "";
        }
      },
      exposition,
      n,
      times,
      keep,
      from,
    );
    writeSync(fd, buf);
  } finally {
    closeSync(fd);
  }
}

// The Prometheus source also lists Nodes from the API (every node the API lists is reported); the
// collector's API server stand-in and its recorded objects serve that.
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

function outcomes(stdout: string): Record<string, number> {
  try {
    const doc = JSON.parse(stdout) as { nodes?: { outcome?: string }[] };
    const counts: Record<string, number> = {};
    for (const n of doc.nodes ?? [])
      counts[String(n.outcome ?? "?")] = (counts[String(n.outcome ?? "?")] ?? 0) + 1;
    return counts;
  } catch {
    return { unparsable: 1 };
  }
}

let PROM_PORT = 19090;
const promUrl = () => `http://127.0.0.1:${PROM_PORT}`;

async function instant(q: string): Promise<{ bytes: number; body: string }> {
  const r = await fetch(`${promUrl()}/api/v1/query?query=${encodeURIComponent(q)}`);
  const body = await r.text();
  return { bytes: body.length, body };
}

/** The one number a count() query answers (0 when it answers no sample). */
async function countOf(q: string): Promise<number> {
  const doc = JSON.parse((await instant(q)).body) as { data: { result: { value: [number, string] }[] } };
  return Number(doc.data.result[0]?.value[1] ?? 0);
}

/** Nodes with a current phase sample: the check that the synthetic series are still fresh. */
const freshNodes = () => countOf("count(max by (node) (proxyscope_node_phase))");

/** The burn-down's range query as the collector sends it: four weeks to the whole second before now. */
async function range(q: string): Promise<{ bytes: number }> {
  const end = Math.floor(Date.now() / 1000);
  const p = new URLSearchParams({
    query: q,
    start: String(end - BURN_DOWN_RANGE_S),
    end: String(end),
    step: String(BURN_DOWN_STEP_S),
  });
  const body = await (await fetch(`${promUrl()}/api/v1/query_range?${p}`)).text();
  return { bytes: body.length };
}

/** What a floor sends: instant queries, and the burn-down's range query when the collector sends one. */
interface FloorSet {
  instant: readonly string[];
  burnDown?: string | undefined;
}

/** A set of PromQL sent all at once, answers read and dropped: wall ms, bytes. */
async function floorRun(set: FloorSet): Promise<{ wallMs: number; bytes: number }> {
  const t = performance.now();
  const sizes = await Promise.all([
    ...set.instant.map(async (q) => (await instant(q)).bytes),
    ...(set.burnDown ? [range(set.burnDown).then((r) => r.bytes)] : []),
  ]);
  return { wallMs: performance.now() - t, bytes: sizes.reduce((a, b) => a + b, 0) };
}

/** Blocks of the TSDB whose time range overlaps another's (what a backfill in pieces leaves). */
export function overlappingBlocks(tsdb: string): number {
  const ranges = readdirSync(tsdb)
    .filter((f) => /^[0-9A-Z]{26}$/.test(f) && existsSync(join(tsdb, f, "meta.json")))
    .map(
      (f) =>
        JSON.parse(readFileSync(join(tsdb, f, "meta.json"), "utf8")) as { minTime: number; maxTime: number },
    );
  return ranges.filter((a, i) =>
    ranges.some((b, j) => i !== j && a.minTime < b.maxTime && b.minTime < a.maxTime),
  ).length;
}

export interface PromBenchOptions {
  repo: string;
  nodes: number;
  /** Collector CLIs to measure, alternated rep by rep (before/after in one run). */
  collectors: { label: string; cli: string; queries?: readonly string[]; burnDown?: string | undefined }[];
  /** Extra floors: named PromQL sets sent straight to Prometheus. */
  floors?: Record<string, readonly string[]>;
  reps: number;
  dir: string;
  /** An existing TSDB to reuse (its series must still be fresh), or where to keep the new one. */
  tsdb?: string;
  windowS?: number;
  stepS?: number;
  /** Prometheus's loopback port (default 19090). */
  port?: number;
  /**
   * Backfill this many nodes at a time (default: all at once). promtool holds every series of its
   * input in memory (11.5 GB at 50,000 nodes); pieces make overlapping blocks, which Prometheus merges
   * by vertical compaction before the runs (it waits for one block).
   */
  pieceNodes?: number;
  /** Where each side runs (default: Prometheus on CPU 1, the client side on CPU 0, given 2 CPUs). */
  pin?: Pinning | null;
  /** A run or floor waits for a 1-minute load below this before it starts (default 2). */
  maxLoad?: number;
}

/** Prometheus on CPU 1, everything else of the row on CPU 0: each side one core, whatever the other does. */
export const defaultPinning = (cpus: number): Pinning | null =>
  cpus >= 2 ? { prometheus: "1", client: "0" } : null;

async function runPromBench(o: PromBenchOptions): Promise<Record<string, unknown>> {
  const api = await startApi(o.repo, o.nodes, o.dir);
  if (typeof api === "string") return { skipped: api };
  try {
    return await withApi(o, api.kubeconfig, api.child.pid!);
  } finally {
    api.child.kill("SIGTERM");
  }
}

/** Waits (up to `maxMs`) for the 1-minute load to fall below `max`; the load it started at. */
async function quietLoad(max: number, maxMs: number): Promise<number> {
  const until = Date.now() + maxMs;
  while (loadavg()[0]! >= max && Date.now() < until) await new Promise((r) => setTimeout(r, 2000));
  return loadavg()[0]!;
}

interface Measured {
  /** The 1-minute load when it started (what else the machine ran: the rule) and when it ended. */
  loadavg: [number, number];
  promCpuMs: number;
  /** CPU on each side's cores that none of the row's processes took (ms); absent when not pinned. */
  othersMs?: { prometheus: number; client: number };
}

/**
 * One run or floor between readings of the load, Prometheus's CPU and, when pinned, the busy time of
 * each side's cores less what the row's own processes used there: what a neighbour took from it.
 */
async function measured<T>(
  o: { pin: Pinning | null; maxLoad: number; promPid: number; apiPid: number },
  run: () => Promise<T> | T,
  clientCpuMs: (r: T) => number,
): Promise<{ value: T } & Measured> {
  const l0 = await quietLoad(o.maxLoad, 120_000);
  const cores0 = coreBusyMs();
  const p0 = processCpuMs(o.promPid);
  const a0 = processCpuMs(o.apiPid);
  const self0 = process.cpuUsage();
  const value = await run();
  const self = process.cpuUsage(self0);
  const promMs = processCpuMs(o.promPid) - p0;
  const apiMs = processCpuMs(o.apiPid) - a0;
  const cores1 = coreBusyMs();
  const ownClient = clientCpuMs(value) + (self.user + self.system) / 1000 + apiMs;
  return {
    value,
    loadavg: [l0, loadavg()[0]!],
    promCpuMs: promMs,
    ...(o.pin
      ? {
          othersMs: {
            prometheus: Math.max(0, busyOn(o.pin.prometheus, cores0, cores1) - promMs),
            client: Math.max(0, busyOn(o.pin.client, cores0, cores1) - ownClient),
          },
        }
      : {}),
  };
}

async function withApi(
  o: PromBenchOptions,
  kubeconfig: string,
  apiPid: number,
): Promise<Record<string, unknown>> {
  const pin = o.pin === undefined ? null : o.pin;
  const maxLoad = o.maxLoad ?? 2;
  const tsdb = o.tsdb ?? `${o.dir}/tsdb`;
  const stepS = o.stepS ?? 60;
  // Long enough for the backfill, Prometheus's start and every rep at this size on a busy machine.
  const windowS = o.windowS ?? Math.round(1200 + o.nodes * 0.024);
  PROM_PORT = o.port ?? 19090;
  // Every family any measured collector asks for: an old collector's query must not find less.
  const keep = new Set([
    ...queriedFamilies(),
    ...o.collectors.flatMap((c) => (c.queries ?? []).flatMap((q) => q.match(/proxyscope_\w+/g) ?? [])),
  ]);
  let backfill: Record<string, unknown> = { reused: tsdb };
  if (!existsSync(tsdb)) {
    const samples = `${o.repo}/bench/results/samples`;
    const metrics = existsSync(samples) ? readdirSync(samples).filter((f) => f.endsWith(".metrics.txt")) : [];
    if (metrics.length === 0) return { skipped: "no recorded agent /metrics (run the node benchmark first)" };
    // The recording that carries most of the queried families (an agent old enough to lack parity's
    // gauges would make the fleet look cheaper than it is).
    const covered = (f: string) => {
      const text = readFileSync(`${samples}/${f}`, "utf8");
      return [...keep].filter((k) => text.includes(`\n${k}{`) || text.includes(`\n${k} `)).length;
    };
    const best = metrics.sort().reduce((a, b) => (covered(b) > covered(a) ? b : a));
    const exposition = readFileSync(`${samples}/${best}`, "utf8");
    const times = scrapeTimes(Math.floor(Date.now() / 1000), windowS, stepS);
    const om = `${o.dir}/fleet.om`;
    const piece = o.pieceNodes ?? o.nodes;
    let genMs = 0;
    let backfillMs = 0;
    let backfillCpuMs = 0;
    let backfillMaxRssMb = 0;
    for (let from = 0; from < o.nodes; from += piece) {
      const t0 = performance.now();
      writeOpenMetricsFile(om, exposition, [from, Math.min(o.nodes, from + piece)], times, keep);
      genMs += performance.now() - t0;
      const t1 = performance.now();
      const b = spawnSync(
        "/usr/bin/time",
        ["-f", "@@TIME %e %U %S %M", "promtool", "tsdb", "create-blocks-from", "openmetrics", om, tsdb],
        { encoding: "utf8", maxBuffer: 64 << 20 },
      );
      rmSync(om, { force: true });
      if (b.status !== 0) return { error: `promtool: ${(b.stderr ?? "").slice(-500)}` };
      const m = /@@TIME (\S+) (\S+) (\S+) (\S+)/.exec(b.stderr ?? "");
      backfillMs += performance.now() - t1;
      backfillCpuMs += m ? (Number(m[2]) + Number(m[3])) * 1000 : Number.NaN;
      backfillMaxRssMb = Math.max(backfillMaxRssMb, m ? Number(m[4]) / 1024 : Number.NaN);
      log(`backfilled nodes ${from}..${Math.min(o.nodes, from + piece) - 1}`);
    }
    backfill = {
      generateMs: genMs,
      backfillMs,
      backfillCpuMs,
      backfillMaxRssMb,
      pieceNodes: piece,
      recording: best,
      scrapes: times.length,
      stepS,
      windowS,
      from: times[0],
      to: times.at(-1),
    };
    log(
      `backfilled ${o.nodes} nodes × ${times.length} scrapes in ${(Number(backfill.backfillMs) / 1000).toFixed(0)} s`,
    );
  }
  writeFileSync(`${o.dir}/prometheus.yml`, "global:\n  scrape_interval: 1h\n");
  // Pinned after the backfill (promtool had every core): this process sends the floors' queries and
  // reads their answers, so it sits with the collector and the API stand-in it reads the Nodes from.
  if (pin) {
    pinProcess(process.pid, pin.client);
    pinProcess(apiPid, pin.client);
  }
  const [promCmd, ...promArgs] = pinnedArgv(pin?.prometheus ?? null, [
    "prometheus",
    `--config.file=${o.dir}/prometheus.yml`,
    `--storage.tsdb.path=${tsdb}`,
    `--web.listen-address=127.0.0.1:${PROM_PORT}`,
    "--storage.tsdb.retention.time=30d",
  ]);
  const prom = spawn(promCmd!, promArgs, {
    stdio: ["ignore", "ignore", "ignore"],
    env: pin ? { ...process.env, GOMAXPROCS: String(cpuCount(pin.prometheus)) } : process.env,
  });
  try {
    const end = Date.now() + 300_000;
    for (;;) {
      const r = spawnSync("curl", ["-sf", `${promUrl()}/-/ready`]);
      if (r.status === 0) break;
      if (Date.now() > end) return { error: "prometheus never got ready" };
      await new Promise((r) => setTimeout(r, 500));
    }
    // Overlapping blocks (a backfill in pieces) are merged by Prometheus's compactor within a minute or
    // two of its start: measured before that, every run would share the machine with the merge.
    for (const until = Date.now() + 1_800_000; overlappingBlocks(tsdb) > 0 && Date.now() < until;)
      await new Promise((r) => setTimeout(r, 5000));
    if (overlappingBlocks(tsdb) > 0)
      return { error: `Prometheus left ${overlappingBlocks(tsdb)} overlapping blocks unmerged after 30 min` };
    const series = await countOf('count({job="proxyscope"})');
    // Where each side ran, as the kernel says it (the collector's own argv starts with taskset).
    const pinning = pin
      ? {
          prometheus: { cpus: allowedCpus(prom.pid!), GOMAXPROCS: cpuCount(pin.prometheus) },
          collector: { cpus: pin.client, via: `taskset -c ${pin.client}` },
          floorClient: { cpus: allowedCpus(process.pid) },
          apiStandIn: { cpus: allowedCpus(apiPid) },
        }
      : null;
    const at = { pin, maxLoad, promPid: prom.pid!, apiPid };
    const fresh0 = await freshNodes();
    if (fresh0 !== o.nodes)
      return {
        error: `only ${fresh0} of ${o.nodes} nodes have a current sample: the synthetic series are stale`,
        ...backfill,
      };
    // The least Prometheus can do and still read every sample the report needs: count() of each
    // family, one number back, no grouping and no answer to encode.
    const readOnly = [...queriedFamilies()].map((f) => `count(${f})`);
    // A collector's floor is all the PromQL it sends: the instant queries and the burn-down's range
    // query (on one pinned core Prometheus's ~3 s for the range query is in the collector's wall too).
    const floorSets: Record<string, FloorSet> = {
      "read-only: count() of each family": { instant: readOnly },
      ...Object.fromEntries(
        o.collectors.map((c) => [
          `queries of ${c.label}`,
          {
            instant: c.queries ?? Object.values(queries("node")),
            burnDown: c.burnDown ?? burnDownQuery("node"),
          },
        ]),
      ),
      ...Object.fromEntries(Object.entries(o.floors ?? {}).map(([k, v]) => [k, { instant: v }])),
    };
    // Each run and floor carries the 1-minute load when it started and when it ended: one that started
    // at or above --max-load on this 2-core machine is rerun, not reported. The load during a pinned
    // run is ~2 by construction (one core each side, both busy), so it is reported, not judged.
    const floors: Record<string, ({ wallMs: number; bytes: number } & Measured)[]> = {};
    const runs: Record<string, (Omit<TimedRun, "stdout"> & Measured)[]> = {};
    const counts: Record<string, Record<string, number>> = {};
    for (let k = 0; k < o.reps; k++) {
      for (const [name, qs] of Object.entries(floorSets)) {
        const { value: f, ...m } = await measured(
          at,
          () => floorRun(qs),
          () => 0,
        );
        (floors[name] ??= []).push({ ...f, ...m });
        log(
          `floor "${name}" (${qs.instant.length} queries${qs.burnDown ? " + the burn-down's range query" : ""}): ${f.wallMs.toFixed(0)} ms, Prometheus CPU ${m.promCpuMs.toFixed(0)} ms, ${(f.bytes / 2 ** 20).toFixed(1)} MiB, load ${m.loadavg.map((l) => l.toFixed(1)).join("→")}, others ${JSON.stringify(m.othersMs ?? {})}`,
        );
      }
      for (const c of o.collectors) {
        const argv = pinnedArgv(pin?.client ?? null, [
          process.execPath,
          c.cli,
          "report",
          "--source",
          "prometheus",
          "--prometheus-url",
          promUrl(),
          "--kubeconfig",
          kubeconfig,
          "--output",
          "json",
        ]);
        const { value: r, ...m } = await measured(
          at,
          () => timedRun(argv),
          (x) => x.cpuMs,
        );
        counts[c.label] = outcomes(r.stdout);
        const { stdout: _s, ...rest } = r;
        (runs[c.label] ??= []).push({ ...rest, ...m });
        log(
          `${c.label}, ${o.nodes} nodes: ${r.wallMs.toFixed(0)} ms, ${r.cpuMs.toFixed(0)} ms CPU (Prometheus ${m.promCpuMs.toFixed(0)} ms), ${r.maxRssMb.toFixed(0)} MB (exit ${r.exit}) ${JSON.stringify(counts[c.label])} load ${m.loadavg.map((l) => l.toFixed(1)).join("→")}, others ${JSON.stringify(m.othersMs ?? {})}`,
        );
      }
    }
    const fresh1 = await freshNodes();
    return {
      nodes: o.nodes,
      series,
      families: [...keep],
      ...backfill,
      freshNodes: { before: fresh0, after: fresh1 },
      pinning,
      ...(fresh1 !== o.nodes
        ? { error: `the series went stale during the runs (${fresh1} of ${o.nodes} fresh at the end)` }
        : {}),
      floors,
      runs,
      outcomes: counts,
    };
  } finally {
    prom.kill("SIGTERM");
    await new Promise((r) => prom.once("exit", r));
    if (!o.tsdb) rmSync(tsdb, { recursive: true, force: true });
  }
}

interface Timed {
  wallMs: number;
  loadavg?: [number, number];
  othersMs?: { prometheus: number; client: number };
}

/** Pure: a run or floor counts when it started at a 1-minute load below `maxLoad` (what else ran). */
export const startedQuiet = (x: Timed, maxLoad: number): boolean => (x.loadavg?.[0] ?? 0) < maxLoad;

/**
 * The runs beside their floors as markdown (--out FILE.json writes FILE.md too): per collector, its
 * median wall time against the median of the floor of its own queries, the ratio, and the load of every
 * run (when it started → when it ended). A run or floor that started at a 1-minute load at or above
 * `maxLoad` is left out of the medians and counted as rerun; with none left the row reads "rerun",
 * never a figure. Pinned, where each side ran and the CPU others took on its cores are said below.
 */
export function renderPromBench(r: Record<string, unknown>, maxLoad: number): string {
  const floors = (r.floors ?? {}) as Record<string, Timed[]>;
  const runs = (r.runs ?? {}) as Record<
    string,
    (Timed & { cpuMs: number; maxRssMb: number; exit: number })[]
  >;
  const quiet = <T extends Timed>(xs: T[]) => xs.filter((x) => startedQuiet(x, maxLoad));
  const med = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length === 0 ? Number.NaN : (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2;
  };
  const loads = (xs: Timed[]) =>
    xs.map((x) => (x.loadavg ?? []).map((l) => l.toFixed(1)).join("→")).join(", ");
  const ms = (v: number) => (Number.isFinite(v) ? `${(v / 1000).toFixed(2)} s` : "rerun");
  const lines = [
    `Prometheus source at ${String(r.nodes)} nodes (${String(r.series)} series; ${typeof r.measuredAt === "string" ? `${r.measuredAt.slice(0, 16).replace("T", " ")} UTC, ` : ""}host, Prometheus 2.42, loopback; the API server stand-in lists the nodes). Wall time, medians of the runs that started at a 1-minute load < ${maxLoad}:`,
    "",
    "| collector | wall (runs) | its CPU | peak RSS | floor: its PromQL (instant queries and the burn-down's range query) straight to Prometheus, all at once | ratio | loads at start→end (runs; floors) | rerun |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const [label, rs] of Object.entries(runs)) {
    const fl = floors[`queries of ${label}`] ?? [];
    const q = quiet(rs);
    const qf = quiet(fl);
    const w = med(q.map((x) => x.wallMs));
    const f = med(qf.map((x) => x.wallMs));
    lines.push(
      `| ${label} | ${ms(w)} (${q.map((x) => (x.wallMs / 1000).toFixed(2)).join(", ")}) | ${ms(med(q.map((x) => x.cpuMs)))} | ${med(q.map((x) => x.maxRssMb)).toFixed(0)} MB | ${ms(f)} | ${Number.isFinite(w / f) ? `${(w / f).toFixed(2)}×` : "—"} | ${loads(rs)}; ${loads(fl)} | ${rs.length - q.length + fl.length - qf.length} |`,
    );
  }
  const ro = floors["read-only: count() of each family"] ?? [];
  lines.push("", `Read-only floor (count() of each family): ${ms(med(quiet(ro).map((x) => x.wallMs)))}.`);
  const pin = r.pinning as {
    prometheus: { cpus: string; GOMAXPROCS: number };
    collector: { cpus: string };
  } | null;
  if (pin) {
    const most = (xs: Timed[], k: "prometheus" | "client") =>
      (Math.max(0, ...xs.map((x) => x.othersMs?.[k] ?? 0)) / 1000).toFixed(2);
    const both = (xs: Timed[]) => `${most(xs, "prometheus")} / ${most(xs, "client")} s`;
    lines.push(
      "",
      `Pinned: Prometheus on CPU ${pin.prometheus.cpus} (GOMAXPROCS=${pin.prometheus.GOMAXPROCS}); the collector, the floors' client and the API server stand-in on CPU ${pin.collector.cpus}, for both sides of the ratio. Busy time on each side's core not accounted to the row's processes (other programs, and kernel work a run causes), at most, Prometheus's core / the client's: runs ${both(Object.values(runs).flat())}, floors ${both(Object.values(floors).flat())}.`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** Row (g) as bench/run.ts records it: this checkout's collector, its own PromQL as the floor. */
export async function prometheusRow(repo: string, n: number, dir: string): Promise<Record<string, unknown>> {
  const r = await runPromBench({
    repo,
    nodes: n,
    collectors: [{ label: "collector", cli: `${repo}/dist/collector/cli.js` }],
    reps: 3,
    dir,
    // 10,000 nodes a piece: ~2.5 GB of promtool at a time instead of 11.5 GB at 50,000.
    pieceNodes: 10_000,
    pin: defaultPinning(availableParallelism()),
  });
  const floors = r.floors as Record<string, { wallMs: number }[]> | undefined;
  const runs = r.runs as Record<string, unknown[]> | undefined;
  const outs = r.outcomes as Record<string, Record<string, number>> | undefined;
  return {
    ...r,
    ...(floors ? { floorMs: (floors["queries of collector"] ?? []).map((f) => f.wallMs) } : {}),
    ...(runs ? { runs: runs.collector } : {}),
    ...(outs ? { outcomes: outs.collector } : {}),
  };
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    options: {
      nodes: { type: "string", default: "5000" },
      collector: { type: "string", multiple: true },
      reps: { type: "string", default: "3" },
      tsdb: { type: "string" },
      "window-s": { type: "string" },
      "step-s": { type: "string" },
      port: { type: "string" },
      "piece-nodes": { type: "string" },
      "max-load": { type: "string", default: "2" },
      pin: { type: "string" },
      out: { type: "string" },
    },
  });
  const maxLoad = Number(values["max-load"]);
  if (!(maxLoad > 0)) usageError(`--max-load wants a load above 0, not '${values["max-load"]}'`);
  const pinned = values.pin === undefined ? defaultPinning(availableParallelism()) : parsePinning(values.pin);
  if (pinned === null && values.pin !== undefined)
    usageError(`--pin wants PROM_CPUS:CLIENT_CPUS (e.g. 1:0) or none, not '${values.pin}'`);
  const pin = pinned === "none" ? null : pinned;
  const pieceNodes =
    values["piece-nodes"] === undefined ? undefined : count(values["piece-nodes"], "--piece-nodes", 1);
  const nodes = count(values.nodes, "--nodes");
  const reps = count(values.reps, "--reps");
  const windowS = values["window-s"] === undefined ? undefined : count(values["window-s"], "--window-s");
  const stepS = values["step-s"] === undefined ? undefined : count(values["step-s"], "--step-s", 1);
  const port = values.port === undefined ? undefined : count(values.port, "--port", 1);
  for (const c of values.collector ?? [])
    if (!/^[^=]+=./.test(c)) usageError(`--collector wants LABEL=DIST/collector/cli.js, not '${c}'`);
  const repo = new URL("../../..", import.meta.url).pathname.replace(/\/$/, "");
  const dir = mkdtempSync("/var/tmp/proxyscope-prom-");
  try {
    const collectors = await Promise.all(
      (values.collector ?? [`collector=${repo}/dist/collector/cli.js`]).map(async (c) => {
        const [label, cli] = c.split("=") as [string, string];
        const mod = (await import(
          join(dirname(cli), "sources/prometheus.js")
        )) as typeof import("../../collector/sources/prometheus.js");
        return {
          label,
          cli,
          queries: Object.values(mod.queries("node")),
          burnDown: mod.burnDownQuery("node"),
        };
      }),
    );
    const r = await runPromBench({
      repo,
      nodes,
      collectors,
      reps,
      dir,
      ...(values.tsdb ? { tsdb: values.tsdb } : {}),
      ...(windowS !== undefined ? { windowS } : {}),
      ...(stepS !== undefined ? { stepS } : {}),
      ...(port !== undefined ? { port } : {}),
      ...(pieceNodes !== undefined ? { pieceNodes } : {}),
      pin,
      maxLoad,
    });
    const out = JSON.stringify(
      { environment: "host, loopback", measuredAt: new Date().toISOString(), loadavg: loadavg(), ...r },
      null,
      1,
    );
    if (values.out) {
      writeFileSync(values.out, out);
      writeFileSync(values.out.replace(/\.json$/, "") + ".md", renderPromBench(JSON.parse(out), maxLoad));
    }
    process.stdout.write(`${out}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    process.stderr.write(`prom bench: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  });
}
