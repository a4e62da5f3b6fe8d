import { readdirSync, readFileSync } from "node:fs";

// What is running, read from /proc: how the hygiene tests count a tool's processes before and after
// a call, and how the suite's leftover check finds what the suite started.

export interface ProcInfo {
  pid: number;
  ppid: number;
  /** Process group id. */
  pgid: number;
  /** argv joined by spaces. */
  cmdline: string;
}

function read(path: string): string | null {
  try {
    return readFileSync(path, "latin1");
  } catch {
    return null; // gone meanwhile, or not ours to read
  }
}

function stat(pid: number): { state: string; ppid: number; pgid: number } | null {
  const s = read(`/proc/${pid}/stat`);
  if (s === null) return null;
  // "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses, so cut at the last ")".
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return { state: f[0] ?? "", ppid: Number(f[1]), pgid: Number(f[2]) };
}

/**
 * Live processes (zombies excluded: they hold nothing but a pid) whose argv or environment holds
 * `marker`, this process excluded.
 */
export function processesWith(marker: string, where: "argv-or-env" | "env" = "argv-or-env"): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    const cmdline = (read(`/proc/${pid}/cmdline`) ?? "").split("\0").join(" ").trim();
    const environ = read(`/proc/${pid}/environ`) ?? "";
    const hit =
      environ.split("\0").some((kv) => kv.includes(marker)) ||
      (where === "argv-or-env" && cmdline.includes(marker));
    if (!hit) continue;
    const st = stat(pid);
    if (st === null || st.state === "Z" || st.state === "X") continue;
    out.push({ pid, ppid: st.ppid, pgid: st.pgid, cmdline });
  }
  return out;
}

/** Polls `list` until it is empty, or `limitMs` passes; returns what is left (empty: none). */
export async function untilEmpty<T>(list: () => T[], limitMs = 60_000): Promise<T[]> {
  const end = Date.now() + limitMs;
  for (;;) {
    const left = list();
    if (left.length === 0 || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls until no process carries `marker`, or `limitMs` passes; returns what is left (empty: none). */
export function untilNoneWith(marker: string, limitMs = 60_000): Promise<ProcInfo[]> {
  return untilEmpty(() => processesWith(marker), limitMs);
}

/** Every process whose parent is `ppid`, zombies included (`state` "Z"). */
export function childrenOf(ppid: number): (ProcInfo & { state: string })[] {
  const out: (ProcInfo & { state: string })[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const st = stat(pid);
    if (st === null || st.ppid !== ppid) continue;
    const cmdline = (read(`/proc/${pid}/cmdline`) ?? "").split("\0").join(" ").trim();
    out.push({ pid, ppid, pgid: st.pgid, cmdline, state: st.state });
  }
  return out;
}
