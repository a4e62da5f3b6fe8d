// What a steady-state scan costs (nothing changed since the last one, so the chain listing
// is reused under its fingerprint) against a full scan, measured side by side in one run, alternating,
// so both see the same machine load. Runs in a namespace that already holds kube-proxy's nftables
// state (bench/nft-calls.ts --keep builds one), with the kube-proxy STAND-IN (test/standins/, built
// into dist/) answering /metrics in kube-proxy's format, since no real kube-proxy runs there.
// How to run it: USAGE, which --help prints.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ToolRunner } from "../../agent/io/run.js";
import { ScanCache } from "../../agent/probes/scan-cache.js";
import { scanNode } from "../../agent/scan.js";
import { benchArgs, count } from "../lib/args.js";
import { kubeProxyStandin } from "../lib/kube-proxy-standin.js";
import { summarize } from "../lib/stats.js";
import { benchScanInput, childrenCpuMs } from "./scan-once.js";

const USAGE = `\
Usage: ip netns exec NS node dist/bench/node/scan-steady.js [--pairs 3] [--out PATH]
A steady-state scan (the chain listing reused) against a full scan, alternating, in a namespace
already holding kube-proxy's nftables state (nft-calls.js --keep builds one). Prints the medians.
  --pairs N   full and steady scans, N of each, after one warm-up scan
  --out PATH  also write every sample to PATH.json (e.g. bench/results/scan-steady-10000)`;

const REPO = fileURLToPath(new URL("../../../", import.meta.url)).replace(/\/$/, "");
const log = (m: string) => process.stderr.write(`[scan-steady] ${m}\n`);
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

interface Sample {
  kind: "full" | "steady";
  wallMs: number;
  cpuMs: number;
  selfCpuMs: number;
  toolsCpuMs: number;
  nftChains: string;
  load: string;
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    options: { pairs: { type: "string", default: "3" }, out: { type: "string" } },
  });
  const pairs = count(values.pairs, "--pairs");
  const kp = await kubeProxyStandin(REPO);
  try {
    const tools = new ToolRunner();
    const input = { ...benchScanInput(tools), kubeProxyMetricsUrl: kp.url };
    const cache = new ScanCache(600_000);
    const samples: Sample[] = [];
    const once = async (kind: Sample["kind"]) => {
      const load = loadavg();
      const cpu0 = process.cpuUsage();
      const child0 = childrenCpuMs();
      const t0 = performance.now();
      const r = await scanNode({ ...input, cache: kind === "steady" ? cache : null });
      const wallMs = performance.now() - t0;
      const c = process.cpuUsage(cpu0);
      const selfCpuMs = (c.user + c.system) / 1000;
      const toolsCpuMs = childrenCpuMs() - child0;
      const src = r.sources?.find((s) => s.source === "nftables");
      const s: Sample = {
        kind,
        wallMs,
        cpuMs: selfCpuMs + toolsCpuMs,
        selfCpuMs,
        toolsCpuMs,
        nftChains: src ? (src.reused ? "reused" : `read (${src.why})`) : "read (no cache)",
        load,
      };
      log(
        `${kind}: ${Math.round(wallMs)} ms wall, ${Math.round(s.cpuMs)} ms CPU, chains ${s.nftChains}, load ${load}`,
      );
      return s;
    };
    // The cache's first scan reads everything, like a full scan: it is shown, not counted as steady.
    const warm = await once("steady");
    for (let i = 0; i < pairs; i++) {
      samples.push(await once("full"));
      samples.push(await once("steady"));
    }
    const med = (k: Sample["kind"], f: (s: Sample) => number) =>
      summarize(samples.filter((s) => s.kind === k).map(f)).median;
    const result = {
      date: new Date().toISOString(),
      pairs,
      warm,
      samples,
      median: {
        full: { wallMs: med("full", (s) => s.wallMs), cpuMs: med("full", (s) => s.cpuMs) },
        steady: { wallMs: med("steady", (s) => s.wallMs), cpuMs: med("steady", (s) => s.cpuMs) },
      },
    };
    process.stdout.write(`${JSON.stringify(result.median)}\n`);
    if (values.out) writeFileSync(`${values.out}.json`, JSON.stringify(result, null, 1) + "\n");
  } finally {
    kp.stop();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`scan-steady: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
