// `node dist/bench/growth.js`: how the agent's one-shot scan grows with the node, both modes, each
// size beside the floor of the reads it needs, measured in the same run. USAGE says how.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { benchArgs, count, seconds, usageError } from "./lib/args.js";
import { ipvsFloor, nftFloor, type FloorRead } from "./lib/floor.js";
import { machine } from "./lib/machine.js";
import { BenchNetns } from "./lib/netns.js";
import { DEFAULT_CACHE, readManifest, recordMissing, sizeDir, writeReplayTools } from "./replay/cache.js";
import { loopTimed, row, scanRep, shLine, type Quiet } from "./growth/measure.js";
import { renderGrowth, type GrowthResults, type ModeRow, type ReadCost } from "./growth/render.js";

const USAGE = `\
Usage: node dist/bench/growth.js [--sizes 1000,10000,30000] [--modes ipvs,nftables] [--reps 3]
         [--cache DIR] [--nft11-root DIR] [--netns-prefix pxgrowth] [--keep-netns] [--prepare-only]
         [--max-load 2] [--wait-quiet-s 600] [--name growth]
How the agent's cost grows: its one-shot \`scan\` (CPU of it and every tool it ran, its own peak RSS)
at each size in both modes, each beside the floor of the reads the report needs, measured in the same
run, and the exponent of the growth (slope of log cost on log N; 1 is linear).
  ipvs mode      the replay (bench/replay): a node recorded once in User-Mode Linux per size (kept in
                 --cache, default ${DEFAULT_CACHE}; recorded when missing), replayed on the host in an
                 empty network namespace; the floor is the ipvs floor's reads replayed (bench/lib/floor.ts)
  nftables mode  one network namespace per size on the host kernel holding kube-proxy's table
                 (bench/lib/gen.ts); the floor is the nftables floor's reads there, each timed; a size
                 of 0 (nftables only) is kube-proxy's empty table: the scan's fixed cost
  --nft11-root   also the scan and the floor's nft reads with trixie's nft 1.1.3 (scripts/nft11-root.sh)
  --keep-netns   leave the nftables namespaces loaded (PREFIX-nft-N) for the next run, which reuses them
  --prepare-only record and load what is missing, measure nothing
A row measured at a 1-minute load above --max-load reads "rerun", no figure; before each row the bench
waits up to --wait-quiet-s for the load to fall. Writes bench/results/NAME.json and NAME.md.`;

const REPO = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const DIST = `${REPO}/dist`;
const RESULTS = `${REPO}/bench/results`;
const CLI = `${DIST}/agent/cli.js`;
const MAXRSS_PRELOAD = `${DIST}/bench/replay/maxrss-preload.js`;
const ENDPOINTS = 10;
const log = (m: string) => process.stderr.write(`[growth] ${m}\n`);
const list = (s: string, flag: string) => (s === "" ? [] : s.split(",").map((x) => count(x, flag)));
// kube-proxy runs on neither node: its endpoints point at a closed port, the same in both modes.
const NO_KUBE_PROXY = [
  "--kube-proxy-metrics-url",
  "http://127.0.0.1:1",
  "--kube-proxy-health-url",
  "http://127.0.0.1:1",
];

function scanArgv(extra: readonly string[]): string[] {
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
    "300000",
    "--probe-timeout-ms",
    "600000",
    ...NO_KUBE_PROXY,
    ...extra,
  ];
}

// A replayed read is a fork and a `cat` of recorded bytes, well under a millisecond at 1,000 Services.
const REPLAY_LOOPS = 100;
/** Passes of each floor read under one GNU time: enough that a read is many of its 10 ms steps. */
const loopsFor = (n: number) => Math.max(1, Math.min(20, Math.round(20_000 / Math.max(1, n))));

/** Each floor read looped in the namespace, its CPU per pass; `resolve` picks the binary. */
function readCosts(
  reads: readonly FloorRead[],
  loops: number,
  netns: string,
  resolve: (r: FloorRead) => string[],
): ReadCost[] {
  return reads.map((r, i) => {
    const t = loopTimed(`/tmp/pxgrowth-read-${process.pid}-${i}.sh`, [shLine(resolve(r))], loops, netns);
    return { argv: r.argv.join(" "), cpuMs: t.cpuMs, wallMs: t.wallMs, maxRssMb: t.maxRssMb, exit: t.exit };
  });
}

async function ipvsRows(q: Quiet, cache: string, sizes: number[], reps: number): Promise<ModeRow[]> {
  const ns = BenchNetns.create("pxgrowth-replay");
  const out: ModeRow[] = [];
  try {
    for (const n of sizes) {
      const dir = sizeDir(cache, n);
      const m = readManifest(dir);
      if (!m) throw new Error(`no record at ${dir}`);
      writeReplayTools(dir, m);
      const argv = scanArgv([
        "--proc-root",
        `${dir}/proc`,
        "--sys-root",
        `${dir}/sys`,
        "--tool-dir",
        `${dir}/tools`,
      ]);
      log(`ipvs ${n} (replay): ${reps} scans, floor`);
      const scan = await row(q, "replay", () => Array.from({ length: reps }, () => scanRep(argv, ns.name)));
      // The ipvs floor's reads replayed: its replay program, or `cat` of the recorded /proc file.
      const resolve = (r: FloorRead) =>
        r.argv[0] === "cat"
          ? ["/bin/cat", r.argv[1]!.replace(/^\/proc\//, `${dir}/proc/`)]
          : [`${dir}/tools/${r.argv[0]}`, ...r.argv.slice(1)];
      const floor = await row(q, "replay", () =>
        Array.from({ length: reps }, () => readCosts(ipvsFloor(), REPLAY_LOOPS, ns.name, resolve)),
      );
      out.push({ mode: "ipvs", n, recordedAt: m.recordedAt, scan, floor });
    }
  } finally {
    ns.destroy();
  }
  return out;
}

const marker = (ns: string) => `/var/tmp/${ns}.loaded`;

/** The size's namespace, loaded unless a kept one from an earlier run already holds it. */
function nftNetns(prefix: string, n: number): { ns: BenchNetns; loadMs: number | "reused" } {
  const name = `${prefix}-nft-${n}`;
  if (existsSync(`/run/netns/${name}`) && existsSync(marker(name))) {
    if (readFileSync(marker(name), "utf8").trim() === String(n))
      return { ns: new BenchNetns(name), loadMs: "reused" };
  }
  rmSync(marker(name), { force: true });
  const ns = BenchNetns.create(name);
  log(`nftables ${n}: loading kube-proxy's table into ${name}`);
  const { ms } = ns.loadNftablesMode(n, ENDPOINTS, REPO);
  writeFileSync(marker(name), `${n}\n`);
  log(`nftables ${n}: loaded in ${(ms / 1000).toFixed(0)} s`);
  return { ns, loadMs: ms };
}

async function nftRows(
  q: Quiet,
  prefix: string,
  sizes: number[],
  reps: number,
  nft11: string | undefined,
  keep: boolean,
  prepareOnly: boolean,
): Promise<ModeRow[]> {
  const out: ModeRow[] = [];
  for (const n of sizes) {
    const { ns, loadMs } = nftNetns(prefix, n);
    try {
      if (prepareOnly) continue;
      const loops = loopsFor(n);
      log(`nftables ${n} (host netns): ${reps} scans, floor (${loops} passes a read)`);
      const scan = await row(q, "host netns", () =>
        Array.from({ length: reps }, () => scanRep(scanArgv([]), ns.name)),
      );
      const which = (r: FloorRead) => [
        r.argv[0] === "nft" ? "/usr/sbin/nft" : r.argv[0]!,
        ...r.argv.slice(1),
      ];
      const floor = await row(q, "host netns", () =>
        Array.from({ length: reps }, () => readCosts(nftFloor(), loops, ns.name, which)),
      );
      const r: ModeRow = { mode: "nftables", n, loadMs, scan, floor };
      // The chain listing as text, not in the floor (the scan reads JSON): what nft itself spends on
      // the JSON form, at the size the nftables target is set at.
      if (n === 10_000) {
        const text: FloorRead[] = [{ argv: ["nft", "list", "chains"], why: "text form" }];
        r.textChains = await row(q, "host netns", () =>
          Array.from({ length: reps }, () => [
            ...readCosts(text, loops, ns.name, (f) => ["/usr/sbin/nft", ...f.argv.slice(1)]),
            ...(nft11
              ? readCosts(text, loops, ns.name, (f) => [
                  `${nft11}/proxyscope-tools/nft`,
                  ...f.argv.slice(1),
                ]).map((c) => ({ ...c, argv: `${c.argv} (1.1.3)` }))
              : []),
          ]),
        );
      }
      if (nft11) {
        const tools = `${nft11}/proxyscope-tools`;
        log(`nftables ${n}: the same with nft 1.1.3`);
        r.scanNft11 = await row(q, "host netns", () =>
          Array.from({ length: reps }, () =>
            scanRep(
              scanArgv(["--tool-dir", tools, "--tool-dir", "/usr/sbin", "--tool-dir", "/usr/bin"]),
              ns.name,
            ),
          ),
        );
        // Only nft's reads differ between the two floors; the rest are the same binaries.
        const nftReads = nftFloor().filter((f) => f.argv[0] === "nft");
        r.floorNft11Reads = await row(q, "host netns", () =>
          Array.from({ length: reps }, () =>
            readCosts(nftReads, loops, ns.name, (f) => [`${tools}/nft`, ...f.argv.slice(1)]),
          ),
        );
      }
      out.push(r);
    } finally {
      if (!keep) {
        ns.destroy();
        rmSync(marker(ns.name), { force: true });
      }
    }
  }
  return out;
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    options: {
      sizes: { type: "string", default: "1000,10000,30000" },
      modes: { type: "string", default: "ipvs,nftables" },
      reps: { type: "string", default: "3" },
      cache: { type: "string", default: DEFAULT_CACHE },
      "nft11-root": { type: "string" },
      "netns-prefix": { type: "string", default: "pxgrowth" },
      "keep-netns": { type: "boolean", default: false },
      "prepare-only": { type: "boolean", default: false },
      "max-load": { type: "string", default: "2" },
      "wait-quiet-s": { type: "string", default: "600" },
      name: { type: "string", default: "growth" },
    },
  });
  const sizes = [...list(values.sizes, "--sizes")].sort((a, b) => a - b);
  // 0 Services: nftables mode only (a node with kube-proxy's empty table), the agent's fixed cost.
  const ipvsSizes = sizes.filter((n) => n > 0);
  const modes = values.modes.split(",");
  for (const m of modes)
    if (m !== "ipvs" && m !== "nftables") usageError(`--modes wants ipvs and/or nftables, not '${m}'`, USAGE);
  const reps = count(values.reps, "--reps", 1);
  const q: Quiet = {
    maxLoad: seconds(values["max-load"], "--max-load"),
    waitS: seconds(values["wait-quiet-s"], "--wait-quiet-s"),
    log,
  };
  const nft11 = values["nft11-root"];
  if (nft11 && !existsSync(`${nft11}/proxyscope-tools/nft`))
    throw new Error(`${nft11}/proxyscope-tools/nft is missing: run scripts/nft11-root.sh ${nft11}`);
  if (modes.includes("ipvs")) await recordMissing(values.cache, ipvsSizes, ENDPOINTS, REPO, log);
  const res: GrowthResults = {
    machine: machine(),
    loadavgStart: loadavg(),
    maxLoad: q.maxLoad,
    reps,
    nft11: nft11
      ? spawnSync(`${nft11}/proxyscope-tools/nft`, ["--version"], { encoding: "utf8" }).stdout.trim()
      : null,
    rows: [],
  };
  const save = () => {
    res.loadavgEnd = loadavg();
    writeFileSync(`${RESULTS}/${values.name}.json`, JSON.stringify(res, null, 1));
    writeFileSync(`${RESULTS}/${values.name}.md`, renderGrowth(res));
  };
  if (!values["prepare-only"])
    res.nodeStart = await row(
      q,
      "host",
      () =>
        loopTimed(`/tmp/pxgrowth-node-${process.pid}.sh`, [shLine([process.execPath, "-e", "0"])], 10).cpuMs,
    );
  if (modes.includes("nftables"))
    res.rows.push(
      ...(await nftRows(
        q,
        values["netns-prefix"],
        sizes,
        reps,
        nft11,
        values["keep-netns"],
        values["prepare-only"],
      )),
    );
  if (values["prepare-only"]) return;
  if (modes.includes("ipvs")) res.rows.push(...(await ipvsRows(q, values.cache, ipvsSizes, reps)));
  save();
  process.stdout.write(renderGrowth(res, "exponents"));
  log(`wrote ${RESULTS}/${values.name}.md`);
}

main().catch((e: unknown) => {
  process.stderr.write(`growth: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
