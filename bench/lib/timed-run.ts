import { spawnSync } from "node:child_process";

export interface TimedRun {
  wallMs: number;
  cpuMs: number;
  maxRssMb: number;
  exit: number | null;
  stdout: string;
  /** Its last words (why a collector gave no report). */
  stderr: string;
}

/** A command under GNU time, its stdout kept (the collector's JSON report). */
export function timedRun(argv: readonly string[]): TimedRun {
  const r = spawnSync("/usr/bin/time", ["-f", "@@TIME %e %U %S %M", ...argv], {
    encoding: "utf8",
    maxBuffer: 512 * 2 ** 20,
  });
  const m = /@@TIME (\S+) (\S+) (\S+) (\S+)/.exec(r.stderr ?? "");
  if (!m) throw new Error(`${argv.join(" ")}: no timing: ${(r.stderr ?? "").slice(-500)}`);
  return {
    wallMs: Number(m[1]) * 1000,
    cpuMs: (Number(m[2]) + Number(m[3])) * 1000,
    maxRssMb: Number(m[4]) / 1024,
    exit: r.status,
    stdout: r.stdout,
    stderr: (r.stderr ?? "").replace(/@@TIME.*\n?/, "").slice(-400),
  };
}
