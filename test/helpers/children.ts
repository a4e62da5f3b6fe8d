// Every long-lived process a test starts (stand-ins, agents, Prometheus, UML guests, collector runs)
// goes through here: it runs in its own process group, carries the suite's marker in its environment,
// and is listed until its group is gone. The test stops it in its teardown; when the test file dies
// instead (tap's timeout sends SIGALRM, then SIGKILL), signal-exit's hook SIGKILLs every listed group
// first. test/run-suite.mjs, `npm test`'s tap run, finds whatever still escaped by the marker.
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { randomBytes } from "node:crypto";
import { onExit } from "signal-exit";

export const SUITE_MARKER = "PROXYSCOPE_TEST_RUN";
// One id for a whole `npm test` (set by test/run-suite.mjs); a file run alone gets its own.
export const RUN_ID = process.env[SUITE_MARKER] ?? `solo-${randomBytes(4).toString("hex")}`;
// Also what spawnSync/execFile children and the agent's tools (run.ts passes it on) inherit.
process.env[SUITE_MARKER] = RUN_ID;

const groups = new Map<number, string>();

function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

onExit(() => {
  for (const pgid of groups.keys()) signalGroup(pgid, "SIGKILL");
});

export interface Owner {
  teardown(fn: () => unknown): void;
}

export interface OwnedOptions extends Omit<SpawnOptions, "detached"> {
  /** The test that owns the process: it is stopped in that test's teardown. */
  owner?: Owner;
}

/** spawn(), in a new process group, tagged and listed; `stopOwned` (or the owner's teardown) ends the group. */
export function spawnOwned(command: string, args: readonly string[], opts: OwnedOptions = {}): ChildProcess {
  const { owner, ...rest } = opts;
  const child = spawn(command, [...args], {
    ...rest,
    detached: true,
    env: { ...(rest.env ?? process.env), [SUITE_MARKER]: RUN_ID },
  });
  const pid = child.pid;
  if (pid !== undefined) {
    groups.set(pid, [command, ...args].join(" ").slice(0, 200));
    child.once("exit", () => {
      // The leader is gone; what it left in its group is not wanted either.
      signalGroup(pid, "SIGKILL");
      groups.delete(pid);
    });
  }
  owner?.teardown(() => stopOwned(child));
  return child;
}

/**
 * SIGTERM to the child's group, SIGKILL to it after `graceMs` (or at once when the leader has gone),
 * and resolves when the leader has exited.
 */
export async function stopOwned(child: ChildProcess, graceMs = 10_000): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  if (child.exitCode !== null || child.signalCode !== null) {
    signalGroup(pid, "SIGKILL");
    groups.delete(pid);
    return;
  }
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  signalGroup(pid, "SIGTERM");
  const killer = setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs);
  await exited;
  clearTimeout(killer);
}

/** The groups still listed (for a failure message). */
export function ownedGroups(): string[] {
  return [...groups.entries()].map(([pgid, what]) => `${pgid} ${what}`);
}

/** Lists a group started elsewhere (e.g. by a helper that must spawn itself) for the exit hook. */
export function adoptGroup(pgid: number, what: string): () => void {
  groups.set(pgid, what);
  return () => groups.delete(pgid);
}
