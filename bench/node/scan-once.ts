// One full scan, in-process, exactly as the agent's serve loop does it (scanNode, then the record
// step that serialises the report and updates the gauges), measured from inside: wall time, CPU of
// this process plus every tool it ran, peak RSS. Every tool call is recorded, so the raw floor can
// replay the same argv. Prints one JSON line. How to run it: USAGE, which --help prints
// (node-bench.ts runs it once per scan).
import { readFileSync, writeFileSync } from "node:fs";
import { ToolRunner, type ExecOptions } from "../../agent/io/run.js";
import type { ToolName } from "../../agent/io/tools.js";
import { AgentMetrics } from "../../agent/metrics/agent-metrics.js";
import { scanNode, type ScanInput } from "../../agent/scan.js";
import { AgentState } from "../../agent/server/state.js";
import { renderScan } from "../../agent/server/rendered-scan.js";
import { benchArgs, count } from "../lib/args.js";

const USAGE = `\
Usage: node dist/bench/node/scan-once.js [--repeat K] [--save-report FILE]
One full scan of this node, in-process, as the agent's serve loop does it; prints one JSON line:
wall time, CPU of this process and of every tool it ran, peak RSS, every tool call.
  --repeat K          K scans back to back (K > 1): prints RSS, heap and wall time after each
                      instead (the flatness run)
  --save-report FILE  also write the scan's report (JSON) to FILE; not with --repeat`;

export interface ToolCall {
  tool: ToolName;
  args: string[];
}

export class RecordingToolRunner extends ToolRunner {
  readonly calls: ToolCall[] = [];
  override run(tool: ToolName, args: readonly string[], opts: ExecOptions) {
    this.calls.push({ tool, args: [...args] });
    return super.run(tool, args, opts);
  }
  override streamLines(
    tool: ToolName,
    args: readonly string[],
    opts: ExecOptions,
    onLine: (l: string) => void,
  ) {
    this.calls.push({ tool, args: [...args] });
    return super.streamLines(tool, args, opts, onLine);
  }
}

/** CPU time of reaped children (cutime + cstime, /proc/self/stat), in ms. */
export function childrenCpuMs(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields after the command: state(0) ... utime(11) stime(12) cutime(13) cstime(14)
  return ((Number(f[13]) + Number(f[14])) * 1000) / 100;
}

// kube-proxy cannot run here; its endpoints point at a closed port, so those probes fail fast
// (connection refused) and cost what a missing kube-proxy costs.
export function benchScanInput(tools: ToolRunner): ScanInput & { node: string; agentVersion: string } {
  return {
    node: "bench-node",
    agentVersion: "bench",
    hostRoot: "/",
    procRoot: "/proc",
    sysRoot: "/sys",
    tools,
    kubeProxyMetricsUrl: "http://127.0.0.1:1",
    kubeProxyHealthUrl: "http://127.0.0.1:1",
    nodeIPs: [],
    callTimeoutMs: 120_000,
    probeTimeoutMs: 180_000,
  };
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    options: { repeat: { type: "string" }, "save-report": { type: "string" } },
  });
  const repeat = count(values.repeat ?? "1", "--repeat");
  const tools = new RecordingToolRunner();
  const input = benchScanInput(tools);
  const state = new AgentState(new AgentMetrics({ version: "bench", processMetrics: true }));
  if (repeat > 1) {
    const rssMb: number[] = [];
    const heapMb: number[] = [];
    const wallMs: number[] = [];
    for (let i = 0; i < repeat; i++) {
      const t0 = performance.now();
      state.record(await renderScan(await scanNode(input)));
      wallMs.push(performance.now() - t0);
      tools.calls.length = 0;
      const m = process.memoryUsage();
      rssMb.push(m.rss / 2 ** 20);
      heapMb.push(m.heapUsed / 2 ** 20);
    }
    process.stdout.write(
      `${JSON.stringify({ repeat, rssMb, heapMb, wallMs, maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
    );
    return;
  }
  const cpu0 = process.cpuUsage();
  const child0 = childrenCpuMs();
  const t0 = performance.now();
  const report = await scanNode(input);
  const rec = state.record(await renderScan(report));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const selfCpuMs = (cpu.user + cpu.system) / 1000;
  const toolsCpuMs = childrenCpuMs() - child0;
  if (values["save-report"]) writeFileSync(values["save-report"], rec.json);
  process.stdout.write(
    `${JSON.stringify({
      wallMs,
      cpuMs: selfCpuMs + toolsCpuMs,
      selfCpuMs,
      toolsCpuMs,
      maxRssMb: process.resourceUsage().maxRSS / 1024,
      reportBytes: rec.json.length,
      phase: report.phase,
      verdict: report.verdict,
      failedProbes: report.probes.filter((p) => !p.ok).map((p) => p.name),
      probeMs: Object.fromEntries(report.probes.map((p) => [p.name, p.durationMs])),
      calls: tools.calls,
    })}\n`,
  );
}

if (process.argv[1]?.endsWith("scan-once.js")) {
  main().catch((e: unknown) => {
    process.stderr.write(`scan-once: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  });
}
