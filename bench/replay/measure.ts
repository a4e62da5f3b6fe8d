// Runs inside the replay's network namespace (bench/replay/run.ts starts it): every row of the replay
// benchmark, each with its environment and the load average it ran at. USAGE says what it measures.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { benchArgs, count, required, seconds } from "../lib/args.js";
import { ipvsFloor } from "../lib/floor.js";
import { chunks, NFT_BASE, nftDeclarations, nftRulesAndElements, services } from "../lib/gen.js";
import { readManifest, sizeDir, writeReplayTools, type Manifest } from "./cache.js";
import { PROC_FILES } from "./record.js";
import { serveRow } from "./serve.js";

const USAGE = `\
Usage: node dist/bench/replay/measure.js --out FILE --cache DIR [--sizes 1000,10000] [--reps 3]
         [--serve-s 600] [--serve-n 10000] [--load-s 90] [--nft-sizes 1000,10000,30000] [--nft11-root DIR]
         [--max-load 2] [--wait-quiet-s 900]
Inside a network namespace (bench/replay/run.js starts it there): the replay's rows, to FILE.`;

const DIST = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const CLI = `${DIST}/agent/cli.js`;
const MAXRSS_PRELOAD = `${DIST}/bench/replay/maxrss-preload.js`;
const log = (m: string) => process.stderr.write(`[replay] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load1 = () => loadavg()[0]!;
// Floor runs repeat this many times under one /usr/bin/time: it reports CPU in 10 ms steps, and one
// pass of the floor's replayed reads costs a few ms at the host's speed.
const FLOOR_LOOPS = 20;
// kube-proxy is not in the record (the UML bench runs none): its endpoints point at a closed port.
const NO_KUBE_PROXY = [
  "--kube-proxy-metrics-url",
  "http://127.0.0.1:1",
  "--kube-proxy-health-url",
  "http://127.0.0.1:1",
];

type Env = "replay" | "host netns" | "UML";
interface Row<T> {
  env: Env;
  loadavg: [number, number];
  /** "rerun": measured above --max-load (1-minute load average), not to be reported. */
  status: "ok" | "rerun";
  value: T;
}

let maxLoad = 2;
let waitQuietS = 900;

async function waitQuiet(): Promise<void> {
  const end = Date.now() + waitQuietS * 1000;
  if (load1() > maxLoad) log(`load ${load1().toFixed(2)} > ${maxLoad}: waiting up to ${waitQuietS} s`);
  while (load1() > maxLoad && Date.now() < end) await sleep(10_000);
}

async function row<T>(env: Env, f: () => T | Promise<T>): Promise<Row<T>> {
  await waitQuiet();
  const l0 = load1();
  const value = await f();
  const l1 = load1();
  return { env, loadavg: [l0, l1], status: Math.max(l0, l1) > maxLoad ? "rerun" : "ok", value };
}

interface Timed {
  wallMs: number;
  cpuMs: number;
  maxRssMb: number;
  exit: number | null;
  stdout: string;
}

/** argv under GNU time: wall, user+sys of it and every child it waited for, the largest child's RSS. */
function timed(argv: readonly string[]): Timed {
  const tf = `/tmp/pxbench-time-${process.pid}`;
  const r = spawnSync("/usr/bin/time", ["-o", tf, "-f", "%e %U %S %M", ...argv], {
    encoding: "utf8",
    maxBuffer: 256 * 2 ** 20,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const t = readFileSync(tf, "utf8").trim().split("\n").pop()!.split(" ").map(Number);
  rmSync(tf, { force: true });
  return {
    wallMs: t[0]! * 1000,
    cpuMs: (t[1]! + t[2]!) * 1000,
    maxRssMb: t[3]! / 1024,
    exit: r.status,
    stdout: r.stdout,
  };
}

/** A /bin/sh loop of `lines` run `loops` times under time; per pass. */
function loopTimed(dir: string, name: string, lines: string[], loops = FLOOR_LOOPS) {
  const f = `${dir}/${name}.sh`;
  writeFileSync(f, `i=0\nwhile [ $i -lt ${loops} ]; do\n${lines.join("\n")}\ni=$((i+1))\ndone\n`);
  const t = timed(["/bin/sh", f]);
  return { wallMs: t.wallMs / loops, cpuMs: t.cpuMs / loops, loops };
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The ipvs floor's reads, each replayed from the record: its replay tool, or `cat` of the proc file. */
function floorLines(dir: string): string[] {
  return ipvsFloor().map((r) =>
    r.argv[0] === "cat"
      ? `/bin/cat ${quote(r.argv[1]!.replace(/^\/proc\//, `${dir}/proc/`))} >/dev/null`
      : `${dir}/tools/${r.argv[0]} ${r.argv.slice(1).map(quote).join(" ")} >/dev/null 2>&1`,
  );
}

/** Every read of the agent's own scan, replayed: its tool calls, and `cat` of each recorded proc file. */
function sameBytesLines(dir: string, m: Manifest): string[] {
  return [
    ...m.calls
      .filter((c) => c.by.includes("scan"))
      .map((c) => `${dir}/tools/${c.tool} ${c.args.map(quote).join(" ")} >/dev/null 2>&1`),
    ...PROC_FILES.filter((f) => existsSync(`${dir}/proc/${f}`)).map(
      (f) => `/bin/cat ${quote(`${dir}/proc/${f}`)} >/dev/null`,
    ),
  ];
}

interface ReportLike {
  phase?: string;
  verdict?: string;
  probes?: { name: string; ok: boolean }[];
}

function scanArgv(dir: string | null, extra: string[] = []): string[] {
  return [
    process.execPath,
    "--import",
    MAXRSS_PRELOAD,
    CLI,
    "scan",
    "-o",
    "json",
    "--node",
    "bench-node",
    "--call-timeout-ms",
    "120000",
    "--probe-timeout-ms",
    "180000",
    ...NO_KUBE_PROXY,
    ...(dir ? ["--proc-root", `${dir}/proc`, "--sys-root", `${dir}/sys`, "--tool-dir", `${dir}/tools`] : []),
    ...extra,
  ];
}

function scanRep(argv: string[]) {
  const rssOut = `/tmp/pxbench-maxrss-${process.pid}`;
  rmSync(rssOut, { force: true });
  process.env.PXBENCH_MAXRSS_OUT = rssOut;
  const t = timed(argv);
  const agentMaxRssMb = existsSync(rssOut) ? Number(readFileSync(rssOut, "utf8").trim()) : Number.NaN;
  rmSync(rssOut, { force: true });
  let rep: ReportLike = {};
  try {
    rep = JSON.parse(t.stdout) as ReportLike;
  } catch {
    // judged below: no report is a failed scan
  }
  return {
    wallMs: t.wallMs,
    cpuMs: t.cpuMs,
    // The agent's own peak; GNU time's is the largest process it waited for (nft, in nftables mode).
    maxRssMb: agentMaxRssMb,
    largestProcessRssMb: t.maxRssMb,
    exit: t.exit,
    phase: rep.phase ?? null,
    verdict: rep.verdict ?? null,
    failedProbes: (rep.probes ?? []).filter((p) => !p.ok).map((p) => p.name),
  };
}

/**
 * The one-shot row: `reps` rounds, each the agent's scan, the floor's replayed reads and Node's start
 * (`node` running an empty module), one after the other, so the three see the same machine and the
 * ratio with Node's start taken out is (scan - start) / floor from one run. A first scan before the
 * rounds is kept apart: it fills the compile cache and the page cache the rounds then find warm.
 */
async function oneShotRounds(dir: string, reps: number) {
  const cacheDir = `/tmp/pxbench-compile-cache-${process.pid}`;
  const empty = `/tmp/pxbench-empty-${process.pid}.mjs`;
  writeFileSync(empty, "");
  // As the image runs a one-shot command: the compile cache on (Dockerfile's PROXYSCOPE_COMPILE_CACHE).
  process.env.PROXYSCOPE_COMPILE_CACHE = cacheDir;
  try {
    const first = await row("replay", () => scanRep(scanArgv(dir)));
    const rounds = await row("replay", () =>
      Array.from({ length: reps }, () => ({
        scan: scanRep(scanArgv(dir)),
        floor: loopTimed(dir, "floor", floorLines(dir)),
        start: loopTimed(dir, "node-start", [`${process.execPath} ${quote(empty)}`], 10),
      })),
    );
    const part = <K extends "scan" | "floor" | "start">(k: K) => ({
      ...rounds,
      value: rounds.value.map((x) => x[k]),
    });
    return { firstScan: first, scan: part("scan"), floor: part("floor"), nodeStart: part("start") };
  } finally {
    delete process.env.PROXYSCOPE_COMPILE_CACHE;
    rmSync(cacheDir, { recursive: true, force: true });
    rmSync(empty, { force: true });
  }
}

function nftLoad(from: number, to: number): number {
  const t0 = performance.now();
  const run = (argv: string[], input: string) => {
    const r = spawnSync(argv[0]!, argv.slice(1), { input, encoding: "utf8", maxBuffer: 64 * 2 ** 20 });
    if (r.status !== 0) throw new Error(`${argv.join(" ")}: ${r.stderr.slice(0, 300)}`);
  };
  const svcs = services(from, to, 10);
  if (from === 0) {
    const DIR = fileURLToPath(new URL("../../../", import.meta.url));
    run(
      ["iptables-nft-restore", "--noflush"],
      readFileSync(`${DIR}/test/fixtures/netfilter/sources/kubelet.rules`, "utf8"),
    );
    run(["nft", "-f", "-"], NFT_BASE);
  }
  run(["nft", "-f", "-"], nftDeclarations(svcs));
  for (const [a, b] of chunks(svcs.length, 500))
    run(["nft", "-f", "-"], nftRulesAndElements(svcs.slice(a, b)));
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    options: {
      out: { type: "string" },
      cache: { type: "string" },
      sizes: { type: "string", default: "1000,10000,30000" },
      reps: { type: "string", default: "3" },
      "serve-s": { type: "string", default: "600" },
      "serve-n": { type: "string", default: "10000" },
      "load-s": { type: "string", default: "90" },
      "nft-sizes": { type: "string", default: "" },
      "nft11-root": { type: "string" },
      "max-load": { type: "string", default: "2" },
      "wait-quiet-s": { type: "string", default: "900" },
    },
  });
  const loadS = seconds(values["load-s"], "--load-s");
  const out = required(values.out, "--out");
  const cache = required(values.cache, "--cache");
  const reps = count(values.reps, "--reps");
  const serveS = seconds(values["serve-s"], "--serve-s");
  const serveN = count(values["serve-n"], "--serve-n");
  maxLoad = Number(values["max-load"]);
  waitQuietS = seconds(values["wait-quiet-s"], "--wait-quiet-s");
  const sizes = values.sizes === "" ? [] : values.sizes.split(",").map((s) => count(s, "--sizes"));
  const nftSizes =
    values["nft-sizes"] === "" ? [] : values["nft-sizes"].split(",").map((s) => count(s, "--nft-sizes"));
  const res: Record<string, unknown> = { maxLoad, reps, floorLoops: FLOOR_LOOPS };
  const save = () => writeFileSync(out, JSON.stringify(res, null, 1));

  res.nodeStart = await row("replay", () =>
    loopTimed("/tmp", `pxbench-node-start-${process.pid}`, [`${process.execPath} -e 0`], 10),
  );
  rmSync(`/tmp/pxbench-node-start-${process.pid}.sh`, { force: true });
  const ipvs: Record<string, unknown> = {};
  res.ipvs = ipvs;
  for (const n of sizes) {
    const dir = sizeDir(cache, n);
    const m = readManifest(dir);
    if (!m) throw new Error(`no record at ${dir}`);
    writeReplayTools(dir, m);
    rmSync(`${dir}/misses.log`, { force: true });
    const r: Record<string, unknown> = {
      recordedAt: m.recordedAt,
      umlScan: m.scan,
      bytes: {
        procIpVs: m.procFiles["net/ip_vs"],
        tools: Object.fromEntries(m.calls.map((c) => [[c.tool, ...c.args].join(" "), c.bytes])),
      },
      // The tools' own cost, measured in UML when recorded: apart, never in the agent's row.
      umlTools: {
        env: "UML",
        calls: m.calls.map((c) => ({
          argv: [c.tool, ...c.args].join(" "),
          by: c.by,
          cpuMs: c.umlCpuMs,
          wallMs: c.umlWallMs,
        })),
        procCat: m.procTimed,
        hostLoadavg: m.hostLoadavg ?? null,
      },
    };
    ipvs[n] = r;
    log(`ipvs ${n}: ${reps} rounds of scan, floor and Node's start, alternated; same bytes`);
    Object.assign(r, await oneShotRounds(dir, reps));
    r.sameBytes = await row("replay", () =>
      Array.from({ length: reps }, () => loopTimed(dir, "same-bytes", sameBytesLines(dir, m))),
    );
    r.misses = existsSync(`${dir}/misses.log`)
      ? readFileSync(`${dir}/misses.log`, "utf8").split("\n").filter(Boolean)
      : [];
    save();
  }
  if (serveS > 0 && sizes.includes(serveN)) {
    const dir = sizeDir(cache, serveN);
    const floor = (ipvs[serveN] as { floor: Row<{ cpuMs: number }[]> }).floor.value;
    const floorMs = [...floor.map((f) => f.cpuMs)].sort((a, b) => a - b)[Math.floor(floor.length / 2)]!;
    log(`ipvs ${serveN}: serve for ${serveS} s`);
    res.serve = {
      services: serveN,
      ...(await row("replay", () => serveRow({ dir, windowS: serveS, loadS, floorCpuMs: floorMs }))),
    };
    save();
  }
  const nft: Record<string, unknown> = {};
  res.nft = nft;
  let have = 0;
  for (const n of [...nftSizes].sort((a, b) => a - b)) {
    const loadMs = nftLoad(have, n);
    have = n;
    log(`nft ${n}: loaded in ${(loadMs / 1000).toFixed(0)} s; ${reps} scans`);
    const r: Record<string, unknown> = { loadMs };
    nft[n] = r;
    r.scan = await row("host netns", () => Array.from({ length: reps }, () => scanRep(scanArgv(null))));
    if (values["nft11-root"]) {
      const tools = `${values["nft11-root"]}/proxyscope-tools`;
      r.scanNft11 = await row("host netns", () =>
        Array.from({ length: reps }, () =>
          scanRep(scanArgv(null, ["--tool-dir", tools, "--tool-dir", "/usr/sbin", "--tool-dir", "/usr/bin"])),
        ),
      );
      r.nft11ListChains = await row("host netns", () =>
        Array.from({ length: reps }, () => {
          const t = timed([`${tools}/nft`, "-j", "list", "chains"]);
          return { wallMs: t.wallMs, cpuMs: t.cpuMs, maxRssMb: t.maxRssMb, exit: t.exit };
        }),
      );
      r.nft10ListChains = await row("host netns", () =>
        Array.from({ length: reps }, () => {
          const t = timed(["/usr/sbin/nft", "-j", "list", "chains"]);
          return { wallMs: t.wallMs, cpuMs: t.cpuMs, maxRssMb: t.maxRssMb, exit: t.exit };
        }),
      );
    }
    save();
  }
  save();
}

main().catch((e: unknown) => {
  process.stderr.write(`measure: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
