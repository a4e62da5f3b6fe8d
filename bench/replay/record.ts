// Runs INSIDE the User-Mode Linux guest, once per size, against the ipvs-mode state built there: one
// scan with every tool call recorded, then each call's output (and each read of the ipvs floor) saved
// byte for byte with its exit code, the /proc and /sys files the agent reads copied, and every tool
// timed under /usr/bin/time in the guest (the tools' own cost, reported apart from the agent's).
// bench/replay/cache.ts boots the guest; bench/replay/run.ts replays the record on the host.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { resolveTool } from "../../agent/io/run.js";
import type { ToolName } from "../../agent/io/tools.js";
import { AgentMetrics } from "../../agent/metrics/agent-metrics.js";
import { scanNode } from "../../agent/scan.js";
import { renderScan } from "../../agent/server/rendered-scan.js";
import { AgentState } from "../../agent/server/state.js";
import { benchArgs, count, required } from "../lib/args.js";
import { ipvsFloor } from "../lib/floor.js";
import { benchScanInput, RecordingToolRunner } from "../node/scan-once.js";

const USAGE = `\
Usage: node dist/bench/replay/record.js --out DIR [--services N] [--tool-reps 2]
Inside the guest: records what a scan of this node reads into DIR (proc/, sys/, out/, manifest.json).`;

// What the agent reads under --proc-root (agent/probes, agent/io): copied when present, left absent
// when the guest has no such file, so the replay sees the same absences.
export const PROC_FILES = [
  "modules",
  "net/ip_vs",
  "net/ip_vs_stats",
  "net/ip_vs_conn",
  "net/ip_tables_names",
  "net/ip6_tables_names",
  "net/tcp",
  "net/tcp6",
  "net/udp",
  "net/udp6",
  "net/nf_conntrack",
  "sys/kernel/osrelease",
];
// Whole sysctl subtrees the probes look into (sysctls.ts, sysctl-config.ts): read file by file in this
// process, since a fork costs ~0.1 s in UML.
const PROC_TREES = ["sys/net/ipv4", "sys/net/ipv6/conf/all", "sys/net/netfilter", "sys/net/bridge"];
// The cheap reads of serve's ipvs-mode gate (agent/probes/ipvs-gate.ts, readIpvsGateKey) that a
// one-shot scan does not make; \`ipset list -terse\` is the scan's own call too. A call missing here
// shows in the replay's misses.log and makes every serve scan a full read.
const GATE_CALLS: readonly (readonly [ToolName, readonly string[]])[] = [
  ["ip", ["-j", "addr", "show", "up"]],
  ["ipset", ["list", "-terse"]],
];
// ip_vs_conn can be large on a busy node; the record keeps its head (this guest has no connections).
const CONN_SAMPLE_BYTES = 4 * 2 ** 20;

export interface RecordedCall {
  tool: ToolName;
  args: string[];
  exit: number;
  stdoutFile: string;
  stderrFile: string;
  bytes: number;
  /** Where the call came from: the agent's scan, the ipvs-mode gate of `serve`, the ipvs floor. */
  by: ("scan" | "gate" | "floor")[];
  /** Under /usr/bin/time in the guest, ms. */
  umlWallMs: number[];
  umlCpuMs: number[];
}

function copyTree(src: string, dst: string): number {
  let n = 0;
  let entries: string[];
  try {
    entries = readdirSync(src);
  } catch {
    return 0;
  }
  for (const e of entries) {
    const s = join(src, e);
    const d = join(dst, e);
    try {
      const text = readFileSync(s);
      mkdirSync(dirname(d), { recursive: true });
      writeFileSync(d, text);
      n++;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EISDIR") n += copyTree(s, d);
      // write-only or unreadable sysctls: left absent, as the agent would find them unreadable
    }
  }
  return n;
}

function timed(path: string, args: readonly string[]): { wallMs: number; cpuMs: number } {
  const r = spawnSync("/usr/bin/time", ["-f", "@@TIME %e %U %S", path, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "ignore", "pipe"],
  });
  const m = /@@TIME (\S+) (\S+) (\S+)/.exec(r.stderr ?? "");
  return m
    ? { wallMs: Number(m[1]) * 1000, cpuMs: (Number(m[2]) + Number(m[3])) * 1000 }
    : { wallMs: Number.NaN, cpuMs: Number.NaN };
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, {
    options: {
      out: { type: "string" },
      services: { type: "string", default: "0" },
      "tool-reps": { type: "string", default: "2" },
    },
  });
  const out = required(values.out, "--out");
  const toolReps = count(values["tool-reps"], "--tool-reps");
  mkdirSync(`${out}/out`, { recursive: true });
  mkdirSync(`${out}/proc`, { recursive: true });

  const tools = new RecordingToolRunner();
  const state = new AgentState(new AgentMetrics({ version: "bench", processMetrics: true }));
  const report = await scanNode(benchScanInput(tools));
  state.record(await renderScan(report));

  const calls = new Map<string, RecordedCall>();
  const add = (tool: ToolName, args: string[], by: RecordedCall["by"][number]) => {
    const key = [tool, ...args].join(" ");
    const have = calls.get(key);
    if (have) {
      if (!have.by.includes(by)) have.by.push(by);
      return;
    }
    calls.set(key, {
      tool,
      args,
      exit: -1,
      stdoutFile: "",
      stderrFile: "",
      bytes: 0,
      by: [by],
      umlWallMs: [],
      umlCpuMs: [],
    });
  };
  for (const c of tools.calls) add(c.tool, c.args, "scan");
  // A one-shot scan reads no gate (it reads everything anyway); \`serve\` on the replay does each scan.
  for (const [tool, args] of GATE_CALLS) add(tool, [...args], "gate");
  for (const r of ipvsFloor()) if (r.argv[0] !== "cat") add(r.argv[0] as ToolName, r.argv.slice(1), "floor");

  let i = 0;
  for (const c of calls.values()) {
    const path = resolveTool(c.tool);
    if (path === null) throw new Error(`${c.tool}: not found in the guest`);
    const r = spawnSync(path, c.args, { maxBuffer: 1024 * 2 ** 20, stdio: ["ignore", "pipe", "pipe"] });
    c.stdoutFile = `out/${i}.out`;
    c.stderrFile = `out/${i}.err`;
    writeFileSync(`${out}/${c.stdoutFile}`, r.stdout);
    writeFileSync(`${out}/${c.stderrFile}`, r.stderr);
    c.exit = r.status ?? 128;
    c.bytes = r.stdout.length;
    for (let k = 0; k < toolReps; k++) {
      const t = timed(path, c.args);
      c.umlWallMs.push(t.wallMs);
      c.umlCpuMs.push(t.cpuMs);
    }
    i++;
  }

  const procFiles: Record<string, number> = {};
  for (const f of PROC_FILES) {
    const src = `/proc/${f}`;
    if (!existsSync(src)) continue;
    const dst = `${out}/proc/${f}`;
    mkdirSync(dirname(dst), { recursive: true });
    // read(), not copyFileSync: /proc files report size 0 and copy_file_range copies nothing.
    const b = readFileSync(src);
    writeFileSync(dst, f === "net/ip_vs_conn" ? b.subarray(0, CONN_SAMPLE_BYTES) : b);
    procFiles[f] = readFileSync(dst).length;
  }
  let sysctls = 0;
  for (const t of PROC_TREES) sysctls += copyTree(`/proc/${t}`, `${out}/proc/${t}`);
  // The one /sys read (probes/ipsets.ts): which modules the kernel has.
  for (const m of readdirSync("/sys/module")) mkdirSync(`${out}/sys/module/${m}`, { recursive: true });
  const procTimed: Record<string, { umlWallMs: number[]; umlCpuMs: number[] }> = {};
  for (const f of ["net/ip_vs", "modules"]) {
    procTimed[f] = { umlWallMs: [], umlCpuMs: [] };
    for (let k = 0; k < toolReps; k++) {
      const t = timed("/bin/cat", [`/proc/${f}`]);
      procTimed[f].umlWallMs.push(t.wallMs);
      procTimed[f].umlCpuMs.push(t.cpuMs);
    }
  }

  writeFileSync(
    `${out}/manifest.json`,
    JSON.stringify(
      {
        services: Number(values.services),
        recordedAt: new Date().toISOString(),
        kernel: readFileSync("/proc/sys/kernel/osrelease", "utf8").trim(),
        scan: {
          phase: report.phase,
          verdict: report.verdict,
          failedProbes: report.probes.filter((p) => !p.ok).map((p) => p.name),
        },
        calls: [...calls.values()],
        procFiles,
        procTimed,
        sysctls,
      },
      null,
      1,
    ),
  );
  process.stderr.write(
    `[record] ${out}: ${calls.size} tool calls, ${Object.keys(procFiles).length} proc files, ${sysctls} sysctls\n`,
  );
}

if (process.argv[1]?.endsWith("record.js")) {
  main().catch((e: unknown) => {
    process.stderr.write(`record: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  });
}
