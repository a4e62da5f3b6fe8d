// Which `nft` calls are cheap at N Services: kube-proxy's nftables-mode state is built once in a
// network namespace (bench/lib/netns.ts), then each candidate call is timed under GNU time (wall,
// user + sys CPU, peak RSS of nft itself) with its output counted and discarded. Writes a JSON file
// and a markdown table. "Which calls build the full cache on nft 1.0.6" is measured
// here, not guessed. How to run it: USAGE, which --help prints.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { benchArgs, count, usageError } from "./lib/args.js";
import { BenchNetns } from "./lib/netns.js";
import { summarize } from "./lib/stats.js";

const USAGE = `\
Usage: node dist/bench/nft-calls.js [--n 10000] [--reps 2] [--out PATH] [--ns pxbench-nftcalls]
         [--reuse] [--keep] [--only REGEX]
Times each candidate \`nft\` call at N Services in a network namespace holding kube-proxy's
nftables-mode state (as root); prints a markdown table.
  --out     also write PATH.json and PATH.md (e.g. bench/results/nft-calls-10000) after each call;
            with --reuse, the rows of an earlier PATH.json are kept, added to or replaced
  --reuse   measure the namespace an earlier --keep run built (the build takes minutes at 10,000)
  --keep    leave the namespace in place
  --only    only the calls whose command line matches REGEX`;

const median = (v: readonly number[]) => summarize(v).median;

const REPO = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const log = (m: string) => process.stderr.write(`[nft-calls] ${m}\n`);

/** The candidates: every way to learn the tables, chains, sets and maps a finding needs. */
const CANDIDATES: readonly (readonly string[])[] = [
  ["-j", "list", "set", "ip", "kube-proxy", "cluster-ips"],
  ["-j", "list", "map", "ip", "kube-proxy", "service-ips"],
  ["-j", "list", "map", "ip", "kube-proxy", "service-nodeports"],
  ["-j", "list", "map", "ip", "kube-proxy", "no-endpoint-services"],
  ["-j", "-t", "list", "map", "ip", "kube-proxy", "service-ips"],
  ["-j", "list", "sets", "ip"],
  ["-j", "-t", "list", "sets", "ip"],
  ["-j", "list", "maps", "ip"],
  ["-j", "-t", "list", "maps", "ip"],
  ["-j", "list", "sets"],
  ["-j", "list", "maps"],
  ["-j", "-t", "list", "sets"],
  ["-j", "-t", "list", "maps"],
  ["-j", "list", "chains"],
  ["list", "chains"],
  ["-j", "list", "chains", "ip"],
  ["-j", "list", "chain", "ip", "kube-proxy", "nat-prerouting"],
  ["-j", "-t", "list", "chain", "ip", "kube-proxy", "nat-prerouting"],
  ["-j", "list", "chain", "ip", "kube-proxy", "services"],
  ["-j", "list", "tables"],
  ["list", "tables"],
  ["-j", "list", "table", "ip", "filter"],
  ["-j", "-t", "list", "table", "ip", "kube-proxy"],
  ["-j", "list", "table", "ip", "kube-proxy"],
  ["-j", "list", "hooks"],
  ["list", "hooks"],
  ["-j", "list", "flowtables"],
];

const order = (command: string) => CANDIDATES.findIndex((c) => c.join(" ") === command);

interface CallSample {
  wallMs: number;
  cpuMs: number;
  maxRssMb: number;
  bytes: number;
  exit: number | null;
  stderr: string;
}

/** One call under GNU time inside the namespace, niced; stdout counted, never kept. */
function timedCall(ns: string, args: readonly string[]): Promise<CallSample> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      "ip",
      ["netns", "exec", ns, "nice", "-n", "19", "/usr/bin/time", "-f", "@@TIME %e %U %S %M", "nft", ...args],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let bytes = 0;
    let err = "";
    child.stdout.on("data", (b: Buffer) => (bytes += b.length));
    child.stderr.on("data", (b: Buffer) => (err = (err + b.toString("utf8")).slice(-4000)));
    child.on("error", reject);
    child.on("close", (code) => {
      const m = /@@TIME (\S+) (\S+) (\S+) (\S+)/.exec(err);
      if (!m) return reject(new Error(`nft ${args.join(" ")}: no timing (${err.slice(-300)})`));
      resolve({
        wallMs: Number(m[1]) * 1000,
        cpuMs: (Number(m[2]) + Number(m[3])) * 1000,
        maxRssMb: Number(m[4]) / 1024,
        bytes,
        exit: code,
        stderr: err
          .replace(/@@TIME.*\n?/, "")
          .trim()
          .slice(0, 300),
      });
    });
  });
}

const loadavg = () => spawnSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).stdout.trim();

function renderMd(r: {
  n: number;
  nftVersion: string;
  date: string;
  loadBefore: string;
  loadAfter: string;
  rows: { command: string; samples: CallSample[]; loadavg: string }[];
}): string {
  const f = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
  const lines: string[] = [
    `### Which nft calls are cheap: ${r.n.toLocaleString("en")} Services × 10 endpoints (${r.nftVersion})`,
    "",
    `Measured ${r.date.slice(0, 16).replace("T", " ")} UTC on ${cpus().length} CPUs shared with other work (1-minute load average`,
    "in the last column: wall time at load 10-25 is several times what an idle node would see; CPU less so),",
    "each call under `nice -n 19 /usr/bin/time` in the benchmark's namespace (`node dist/bench/nft-calls.js`);",
    "medians of the runs, CPU = user + sys of nft itself, output counted and discarded. Orders of magnitude, not decimals.",
    "",
    "| command | wall ms | CPU ms | nft peak RSS MB | output bytes | exit | load |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const row of r.rows) {
    const s = row.samples;
    const exit = s.every((x) => x.exit === 0) ? "0" : `${s[0]!.exit}: ${s[0]!.stderr.split("\n")[0]}`;
    lines.push(
      `| \`nft ${row.command}\` | ${f(median(s.map((x) => x.wallMs)))} | ${f(median(s.map((x) => x.cpuMs)))} | ${f(median(s.map((x) => x.maxRssMb)))} | ${median(s.map((x) => x.bytes)).toLocaleString("en")} | ${exit} | ${row.loadavg.split(" ")[0]} |`,
    );
  }
  return lines.join("\n") + "\n";
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    options: {
      n: { type: "string", default: "10000" },
      reps: { type: "string", default: "2" },
      ns: { type: "string", default: "pxbench-nftcalls" },
      out: { type: "string" },
      reuse: { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      only: { type: "string" },
    },
  });
  const n = count(values.n, "--n");
  const reps = count(values.reps, "--reps");
  let only: RegExp | null = null;
  try {
    only = values.only ? new RegExp(values.only) : null;
  } catch (e) {
    usageError(`--only: ${(e as Error).message}`);
  }
  const ns = values.reuse ? new BenchNetns(values.ns!) : BenchNetns.create(values.ns!);
  try {
    if (!values.reuse) {
      const load = ns.loadNftablesMode(n, 10, REPO);
      log(`N=${n} loaded in ${(load.ms / 1000).toFixed(1)} s`);
    }
    const nftVersion = ns.exec(["nft", "--version"]).trim();
    // A later --only run adds to (or replaces rows of) the file an earlier run wrote: on a busy
    // machine the slowest calls take minutes each, and one run need not hold them all.
    type Row = { command: string; samples: CallSample[]; loadavg: string };
    const file = values.out ? `${values.out}.json` : null;
    const earlier =
      file && values.reuse && existsSync(file)
        ? (JSON.parse(readFileSync(file, "utf8")) as { rows: Row[] })
        : null;
    const rows: Row[] = earlier?.rows ?? [];
    const result = {
      n,
      nftVersion,
      date: new Date().toISOString(),
      loadBefore: loadavg(),
      loadAfter: "",
      rows,
    };
    for (const args of CANDIDATES) {
      const command = args.join(" ");
      if (only && !only.test(command)) continue;
      const samples: CallSample[] = [];
      const load = loadavg();
      for (let i = 0; i < reps; i++) samples.push(await timedCall(ns.name, args));
      log(`nft ${command}: ${samples.map((s) => `${s.wallMs} ms / ${s.cpuMs} ms CPU`).join(", ")}`);
      const row = { command, samples, loadavg: load };
      const at = rows.findIndex((r) => r.command === command);
      if (at >= 0) rows[at] = row;
      else rows.push(row);
      rows.sort((a, b) => order(a.command) - order(b.command));
      result.loadAfter = loadavg();
      if (values.out) {
        writeFileSync(`${values.out}.json`, JSON.stringify(result, null, 1) + "\n");
        writeFileSync(`${values.out}.md`, renderMd(result));
      }
    }
    process.stdout.write(renderMd(result));
  } finally {
    if (!values.keep) ns.destroy();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`nft-calls: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
