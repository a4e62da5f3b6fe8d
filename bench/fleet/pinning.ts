// Row (g) on a small machine: Prometheus on its own core(s), the collector, the straight-PromQL floor's
// client and the API server stand-in on the other(s), the same pinning for both sides of the ratio. On 2
// cores an unpinned 50,000-node row had Prometheus (13.7 s of CPU a run) and the collector fill both cores
// and the row itself pushed the load above 2. Pinned, each side gets one core whatever the other does, and
// what else ran on those cores during a run is counted from /proc/stat, not guessed from the load.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** CPU lists as taskset takes them ("1", "0-1"), or null: not pinned. */
export interface Pinning {
  prometheus: string;
  client: string;
}

/** --pin PROM:CLIENT ("1:0"), or "none". Anything else is null (the caller names the flag). */
export function parsePinning(v: string): Pinning | "none" | null {
  if (v === "none") return "none";
  const m = /^([\d,-]+):([\d,-]+)$/.exec(v);
  return m ? { prometheus: m[1]!, client: m[2]! } : null;
}

/** How many CPUs a taskset list names: GOMAXPROCS for a Prometheus held to them. */
export function cpuCount(list: string): number {
  let n = 0;
  for (const part of list.split(",")) {
    const [a, b] = part.split("-").map(Number) as [number, number | undefined];
    n += b === undefined ? 1 : b - a + 1;
  }
  return n;
}

/** argv run under `taskset -c cpus` (unchanged when not pinned): taskset execs it, so the pid is its. */
export const pinnedArgv = (cpus: string | null, argv: readonly string[]): string[] =>
  cpus === null ? [...argv] : ["taskset", "-c", cpus, ...argv];

/** Every thread of a running process held to `cpus` (the bench itself, the API stand-in). Throws if refused. */
export function pinProcess(pid: number, cpus: string): void {
  const r = spawnSync("taskset", ["-a", "-p", "-c", cpus, String(pid)], {
    encoding: "utf8",
    timeout: 10_000,
  });
  if (r.status !== 0) throw new Error(`taskset -a -p -c ${cpus} ${pid}: ${(r.stderr ?? "").trim()}`);
}

/** The CPUs the kernel lets a process run on, as it says it (the record of where each side ran). */
export function allowedCpus(pid: number): string {
  const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m?.[1] ?? "unknown";
}

/** A process's CPU so far (user + system, ms), from /proc/PID/stat. */
export function processCpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8");
  const v = f.slice(f.lastIndexOf(")") + 2).split(" ");
  return ((Number(v[11]) + Number(v[12])) * 1000) / 100;
}

/** Pure: each core's busy time (ms) from /proc/stat's cpuN lines (every column but idle and iowait). */
export function coreBusyMsFrom(stat: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of stat.matchAll(/^cpu(\d+) (.*)$/gm)) {
    const v = m[2]!.trim().split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already inside user).
    const busy = v[0]! + v[1]! + v[2]! + (v[5] ?? 0) + (v[6] ?? 0) + (v[7] ?? 0);
    out[m[1]!] = (busy * 1000) / 100;
  }
  return out;
}

export const coreBusyMs = () => coreBusyMsFrom(readFileSync("/proc/stat", "utf8"));

/** Pure: the busy time of the cores in `cpus` between two readings (ms). */
export function busyOn(cpus: string, before: Record<string, number>, after: Record<string, number>): number {
  let ms = 0;
  for (const part of cpus.split(",")) {
    const [a, b] = part.split("-").map(Number) as [number, number | undefined];
    for (let c = a; c <= (b ?? a); c++) ms += (after[c] ?? 0) - (before[c] ?? 0);
  }
  return ms;
}
