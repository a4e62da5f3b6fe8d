// What one row of the growth table is made of: the agent's one-shot `scan` under GNU time (CPU of it
// and every process it waited for, its own peak RSS from the preload), and the floor: each read the
// report needs, looped under one GNU time (it counts CPU in 10 ms steps; a read at 1,000 Services
// costs less), its cost per pass. Every figure carries the 1-minute load it ran at.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";

export type Env = "replay" | "host netns" | "host";

export interface Row<T> {
  env: Env;
  /** 1-minute load average before and after. */
  loadavg: [number, number];
  /** "rerun": measured above the load limit; reported as such, never as a figure. */
  status: "ok" | "rerun";
  value: T;
}

const load1 = () => loadavg()[0]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Quiet {
  maxLoad: number;
  waitS: number;
  log: (m: string) => void;
}

/** f, after waiting (up to q.waitS) for the load to fall to q.maxLoad; "rerun" when it ran above. */
export async function row<T>(q: Quiet, env: Env, f: () => T): Promise<Row<T>> {
  const end = Date.now() + q.waitS * 1000;
  if (load1() > q.maxLoad) q.log(`load ${load1().toFixed(2)} > ${q.maxLoad}: waiting up to ${q.waitS} s`);
  while (load1() > q.maxLoad && Date.now() < end) await sleep(5_000);
  const l0 = load1();
  const value = f();
  const l1 = load1();
  return { env, loadavg: [l0, l1], status: Math.max(l0, l1) > q.maxLoad ? "rerun" : "ok", value };
}

export interface Timed {
  wallMs: number;
  cpuMs: number;
  /** GNU time's %M: the largest single process it waited for. */
  maxRssMb: number;
  exit: number | null;
  stdout: string;
}

/** argv under GNU time (its figures to a file: the command's own stderr stays its own). */
export function timed(argv: readonly string[], env?: NodeJS.ProcessEnv): Timed {
  const tf = `/tmp/pxgrowth-time-${process.pid}`;
  const r = spawnSync("/usr/bin/time", ["-o", tf, "-f", "%e %U %S %M", ...argv], {
    encoding: "utf8",
    maxBuffer: 256 * 2 ** 20,
    stdio: ["ignore", "pipe", "pipe"],
    ...(env ? { env } : {}),
  });
  const line = existsSync(tf) ? readFileSync(tf, "utf8").trim().split("\n").pop()! : "";
  rmSync(tf, { force: true });
  const t = line.split(" ").map(Number);
  if (t.length !== 4 || t.some((x) => !Number.isFinite(x)))
    throw new Error(`${argv.join(" ")}: no timing from GNU time (${line || r.error?.message || "nothing"})`);
  return {
    wallMs: t[0]! * 1000,
    cpuMs: (t[1]! + t[2]!) * 1000,
    maxRssMb: t[3]! / 1024,
    exit: r.status,
    stdout: r.stdout,
  };
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * One read as a line of /bin/sh: its argv quoted, output dropped (the floor reads, it keeps nothing);
 * a failing read prints its status, so a read that fails is named, never timed as if it had read.
 */
export const shLine = (argv: readonly string[]) =>
  `${argv.map(quote).join(" ")} >/dev/null 2>&1 || echo "exit $?"`;

/**
 * `lines` run `loops` times by one /bin/sh under GNU time, optionally inside a network namespace:
 * per pass. The shell's own start is one fork in `loops` passes; a read costs it nothing else.
 */
export function loopTimed(
  file: string,
  lines: readonly string[],
  loops: number,
  netns?: string,
): { wallMs: number; cpuMs: number; maxRssMb: number; loops: number; exit: number } {
  writeFileSync(file, `i=0\nwhile [ $i -lt ${loops} ]; do\n${lines.join("\n")}\ni=$((i+1))\ndone\n`);
  try {
    const t = timed([...(netns ? ["ip", "netns", "exec", netns] : []), "/bin/sh", file]);
    const failed = /^exit (\d+)$/m.exec(t.stdout);
    return {
      wallMs: t.wallMs / loops,
      cpuMs: t.cpuMs / loops,
      maxRssMb: t.maxRssMb,
      loops,
      exit: failed ? Number(failed[1]) : (t.exit ?? 128),
    };
  } finally {
    rmSync(file, { force: true });
  }
}

interface ReportLike {
  phase?: string;
  verdict?: string;
  probes?: { name: string; ok: boolean }[];
}

export interface ScanRep {
  wallMs: number;
  cpuMs: number;
  /** The agent's own peak (getrusage at exit); GNU time's is the largest process, nft in nftables mode. */
  maxRssMb: number;
  largestProcessRssMb: number;
  exit: number | null;
  phase: string | null;
  verdict: string | null;
  failedProbes: string[];
}

/** One `scan`: argv starts with node; the preload writes the agent's own peak RSS to a file. */
export function scanRep(argv: readonly string[], netns?: string): ScanRep {
  const rssOut = `/tmp/pxgrowth-maxrss-${process.pid}`;
  rmSync(rssOut, { force: true });
  const t = timed([...(netns ? ["ip", "netns", "exec", netns] : []), ...argv], {
    ...process.env,
    PXBENCH_MAXRSS_OUT: rssOut,
  });
  const own = existsSync(rssOut) ? Number(readFileSync(rssOut, "utf8").trim().split("\n")[0]) : Number.NaN;
  rmSync(rssOut, { force: true });
  let rep: ReportLike = {};
  try {
    rep = JSON.parse(t.stdout) as ReportLike;
  } catch {
    // no report: phase null below, and the table says the scan failed
  }
  return {
    wallMs: t.wallMs,
    cpuMs: t.cpuMs,
    maxRssMb: own,
    largestProcessRssMb: t.maxRssMb,
    exit: t.exit,
    phase: rep.phase ?? null,
    verdict: rep.verdict ?? null,
    failedProbes: (rep.probes ?? []).filter((p) => !p.ok).map((p) => p.name),
  };
}
