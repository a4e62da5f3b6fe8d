// `node dist/bench/replay/run.js`: the agent's own cost in ipvs mode at the host's speed. USAGE says how.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { benchArgs, count } from "../lib/args.js";
import { BenchNetns } from "../lib/netns.js";
import { machine } from "../lib/machine.js";
import { DEFAULT_CACHE, recordMissing } from "./cache.js";
import { renderReplay, type ReplayResults } from "./render.js";

const USAGE = `\
Usage: node dist/bench/replay/run.js [--sizes 1000,10000,30000] [--reps 3] [--serve-s 600]
         [--serve-n 10000] [--load-s 90] [--cache DIR] [--record-only] [--nft-sizes 1000,10000,30000]
         [--nft11-root DIR] [--max-load 2] [--wait-quiet-s 900] [--name replay]
The agent in kube-proxy's ipvs mode at real speed: ipvs-mode nodes recorded ONCE in User-Mode Linux
(kept in --cache, default ${DEFAULT_CACHE}; recorded when missing), replayed on the host in a
network namespace: --proc-root/--sys-root at the recorded files, --tool-dir at replay programs that
/bin/cat the recorded output. Measures the one-shot \`scan\` (CPU user+sys with its children, max
RSS) at each size against the floor (the ipvs floor's reads, replayed), \`serve\` for --serve-s
seconds at --serve-n with the kube-proxy stand-in answering ipvs mode (CPU per hour, RSS and where it
goes, event-loop delay) beside node_exporter (default collectors, its ipvs collector on the record),
then --load-s seconds of paced /metrics clients against it and against a bare node:http server of the
same bytes; the tools' own cost in UML apart, and
with --nft-sizes the same one-shot scan in nftables mode (a namespace on the host). A row measured
at a 1-minute load above --max-load is marked "rerun"; before each row the bench waits up to
--wait-quiet-s for the load to fall to it. Writes bench/results/NAME.json and NAME.md.`;

const REPO = fileURLToPath(new URL("../../../", import.meta.url)).replace(/\/$/, "");
const DIST = `${REPO}/dist`;
const RESULTS = `${REPO}/bench/results`;
const ENDPOINTS = 10;
const log = (m: string) => process.stderr.write(`[replay] ${m}\n`);
const list = (s: string, flag: string) => (s === "" ? [] : s.split(",").map((x) => count(x, flag)));

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    options: {
      sizes: { type: "string", default: "1000,10000,30000" },
      reps: { type: "string", default: "3" },
      "serve-s": { type: "string", default: "600" },
      "serve-n": { type: "string", default: "10000" },
      "load-s": { type: "string", default: "90" },
      cache: { type: "string", default: DEFAULT_CACHE },
      "record-only": { type: "boolean", default: false },
      "nft-sizes": { type: "string", default: "" },
      "nft11-root": { type: "string" },
      "max-load": { type: "string", default: "2" },
      "wait-quiet-s": { type: "string", default: "900" },
      name: { type: "string", default: "replay" },
    },
  });
  const sizes = list(values.sizes, "--sizes");
  await recordMissing(values.cache, sizes, ENDPOINTS, REPO, log);
  if (values["record-only"]) return;
  const out = `/var/tmp/pxbench-replay-${process.pid}.json`;
  const ns = BenchNetns.create("pxbench-replay");
  const results: Record<string, unknown> = { machine: machine(), loadavgStart: loadavg() };
  try {
    const r = spawnSync(
      "ip",
      [
        "netns",
        "exec",
        ns.name,
        process.execPath,
        `${DIST}/bench/replay/measure.js`,
        "--out",
        out,
        "--cache",
        values.cache,
        "--sizes",
        values.sizes,
        "--reps",
        values.reps,
        "--serve-s",
        values["serve-s"],
        "--serve-n",
        values["serve-n"],
        "--load-s",
        values["load-s"],
        "--max-load",
        values["max-load"],
        "--wait-quiet-s",
        values["wait-quiet-s"],
        "--nft-sizes",
        values["nft-sizes"],
        ...(values["nft11-root"] ? ["--nft11-root", values["nft11-root"]] : []),
      ],
      { stdio: ["ignore", "inherit", "inherit"] },
    );
    if (r.status !== 0) log(`measure exited ${r.status}`);
  } finally {
    ns.destroy();
  }
  if (existsSync(out)) {
    Object.assign(results, JSON.parse(readFileSync(out, "utf8")));
    rmSync(out);
  }
  results.loadavgEnd = loadavg();
  writeFileSync(`${RESULTS}/${values.name}.json`, JSON.stringify(results, null, 1));
  writeFileSync(`${RESULTS}/${values.name}.md`, renderReplay(results as ReplayResults));
  log(`wrote ${RESULTS}/${values.name}.md`);
}

main().catch((e: unknown) => {
  process.stderr.write(`replay: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
