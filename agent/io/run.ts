import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { LineSplitter, MAX_LINE_BYTES } from "../../common/lines.js";
import {
  BUNDLED_TOOL_DIR,
  DEFAULT_TOOL_DIRS,
  DEFAULT_WITNESS_DIR,
  isBundledTool,
  isWitnessTool,
  witnessCommand,
  type ToolName,
} from "./tools.js";
import type { ProbeError } from "../facts/probe-error.js";

export interface ExecOptions {
  timeoutMs: number;
  /** Bytes of stdout beyond which the tool is killed and the call fails with `output-cap`. */
  maxBytes: number;
  /** Exit codes that are answers rather than failures (e.g. `ip` exits 1 for "no such device"). */
  okExitCodes?: readonly number[];
}

interface ExecOk {
  ok: true;
  stdout: string;
  stderr: string;
  exitCode: number;
  durationMs: number;
}
export type ExecResult = ExecOk | { ok: false; error: ProbeError };
export type StreamResult = { ok: true; exitCode: number; stderr: string } | { ok: false; error: ProbeError };

/** After SIGTERM to a tool's process group, this long before SIGKILL. */
const KILL_GRACE_MS = 1000;
// After the group is gone (or SIGKILLed), how long the pipes may take to report closed before the
// call drops them: a process stuck in the kernel must not hold the call forever.
const DRAIN_MS = 500;
const STDERR_CAP = 64 * 1024;
const PERMISSION = /operation not permitted|permission denied|you must be root|EPERM|EACCES/i;
// Set by `npm test` so its leftover check can tell the suite's processes from everyone else's; the
// tool's environment is otherwise fixed, and this name means nothing outside the test suite.
const SUITE_MARKER = "PROXYSCOPE_TEST_RUN";

function readable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** Resolves a tool to an absolute path in the configured directories, or `null`. */
export function resolveTool(
  tool: ToolName | "ld.so",
  dirs: readonly string[] = DEFAULT_TOOL_DIRS,
): string | null {
  for (const dir of dirs) {
    const candidate = join(dir, tool);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; try the next directory
    }
  }
  return null;
}

function describe(tool: string, args: readonly string[]): string {
  return [tool, ...args].join(" ");
}

/** Why a call stopped the tool before it finished on its own. */
type Stop = "timeout" | "output-cap" | "long-line" | "reader-failed" | "closed";

/** How one call ended, before it is judged: the one place `run` and `streamLines` differ is stdout. */
interface RawEnd {
  stop: Stop | null;
  /** Why the reader gave up (reader-failed). */
  stopDetail?: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  spawnError: NodeJS.ErrnoException | null;
  stderr: string;
  durationMs: number;
}

// Process groups of calls still running (or whose descendants may still run), in every runner:
// killed outright when this process exits, so no tool outlives the agent.
const LIVE_GROUPS = new Set<number>();
let exitHookInstalled = false;
// Where a scan thread also writes them, for its parent to kill should the thread die (shared-groups.ts).
let mirror: { add(pgid: number): unknown; delete(pgid: number): unknown } | null = null;

/** A scan worker lists its tools' process groups here too, so its parent can end them if it dies. */
export function mirrorLiveGroups(to: typeof mirror): void {
  mirror = to;
}

function liveGroup(pgid: number, live: boolean): void {
  if (live) {
    LIVE_GROUPS.add(pgid);
    mirror?.add(pgid);
  } else {
    LIVE_GROUPS.delete(pgid);
    mirror?.delete(pgid);
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: nobody left in the group
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const pgid of LIVE_GROUPS) signalGroup(pgid, "SIGKILL");
  });
}

/**
 * One running tool in its own process group (detached: a new session). Every way the call ends —
 * exit, timeout, output cap, close — ends the whole group: SIGTERM, then SIGKILL after the grace.
 * The call resolves on the direct child's exit and then stops waiting for pipes that descendants
 * hold, so a wrapper that leaves a hung program behind cannot hold the call, nor the agent.
 */
class Call {
  private child: ChildProcess | null = null;
  private stop: Stop | null = null;
  private stopDetail: string | undefined;
  private code: number | null = null;
  private signal: NodeJS.Signals | null = null;
  private spawnError: NodeJS.ErrnoException | null = null;
  private exited = false;
  private stderr: Buffer[] = [];
  private stderrBytes = 0;
  private openStreams = 0;
  private timers: NodeJS.Timeout[] = [];
  private killTimer: NodeJS.Timeout | null = null;
  private done = false;
  get finished(): boolean {
    return this.done;
  }
  private readonly started = performance.now();
  private resolve!: (end: RawEnd) => void;
  readonly ended: Promise<RawEnd>;

  constructor(
    path: string,
    args: readonly string[],
    env: Record<string, string>,
    timeoutMs: number,
    private readonly onStdout: (chunk: Buffer) => Stop | null,
    private readonly onFinish: (call: Call) => void,
  ) {
    this.ended = new Promise((r) => (this.resolve = r));
    try {
      this.child = spawn(path, [...args], {
        shell: false,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env,
      });
    } catch (e) {
      // Node throws for some spawn errors and emits 'error' for others (EMFILE, EAGAIN, ENOENT).
      this.spawnError = e as NodeJS.ErrnoException;
      this.finish();
      return;
    }
    const child = this.child;
    child.once("error", (e: NodeJS.ErrnoException) => {
      // Only a failed spawn reaches here: we signal the group with process.kill, never child.kill.
      this.spawnError ??= e;
      this.exited = true;
      this.settle();
    });
    if (child.pid !== undefined) {
      installExitHook();
      liveGroup(child.pid, true);
    }
    for (const stream of [child.stdout, child.stderr] as (Readable | null | undefined)[]) {
      if (!stream) continue; // EMFILE: Node gave up before it made the pipes (undefined, not null)
      this.openStreams++;
      stream.once("close", () => {
        this.openStreams--;
        this.settle();
      });
      stream.on("error", () => undefined); // a destroyed pipe; the exit status tells what happened
    }
    child.stdout?.on("data", (chunk: Buffer) => {
      if (this.stop !== null) return;
      let stop: Stop | null;
      try {
        stop = this.onStdout(chunk);
      } catch (e) {
        stop = "reader-failed";
        this.stopDetail = (e as Error)?.message ?? String(e);
      }
      if (stop !== null) this.halt(stop);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      if (this.stderrBytes >= STDERR_CAP) return;
      this.stderr.push(chunk.subarray(0, STDERR_CAP - this.stderrBytes));
      this.stderrBytes += chunk.length;
    });
    child.once("exit", (code, signal) => {
      this.code = code;
      this.signal = signal;
      this.exited = true;
      // The direct child is done; whatever it left in its group is done too.
      if (child.pid !== undefined && signalGroup(child.pid, 0)) this.terminate();
      this.timers.push(setTimeout(() => this.dropPipes(), KILL_GRACE_MS + DRAIN_MS));
      this.settle();
    });
    this.timers.push(setTimeout(() => this.halt("timeout"), timeoutMs));
  }

  /** Stops the tool for `why` (the first reason wins). */
  halt(why: Stop): void {
    if (this.stop === null && !this.exited) this.stop = why;
    this.terminate();
    // A direct child that outlives even SIGKILL (stuck in the kernel) still does not hold the call.
    this.timers.push(
      setTimeout(() => {
        this.exited = true;
        this.dropPipes();
      }, KILL_GRACE_MS + DRAIN_MS),
    );
  }

  private terminate(): void {
    const pid = this.child?.pid;
    if (pid === undefined || this.killTimer !== null) return;
    signalGroup(pid, "SIGTERM");
    // Unref'd: a one-shot command may exit before it fires; the exit hook then SIGKILLs the group.
    this.killTimer = setTimeout(() => {
      signalGroup(pid, "SIGKILL");
      liveGroup(pid, false);
    }, KILL_GRACE_MS);
    this.killTimer.unref();
  }

  private dropPipes(): void {
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    this.openStreams = 0;
    this.settle();
  }

  private settle(): void {
    if (this.done || !this.exited || this.openStreams > 0) return;
    this.finish();
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    for (const t of this.timers) clearTimeout(t);
    const pid = this.child?.pid;
    // Nobody left in the group: forget it now rather than signal a reused id later.
    if (pid !== undefined && !signalGroup(pid, 0)) {
      liveGroup(pid, false);
      if (this.killTimer !== null) clearTimeout(this.killTimer);
    }
    this.onFinish(this);
    this.resolve({
      stop: this.stop,
      stopDetail: this.stopDetail,
      code: this.code,
      signal: this.signal,
      spawnError: this.spawnError,
      stderr: Buffer.concat(this.stderr).toString("utf8"),
      durationMs: performance.now() - this.started,
    });
  }
}

/** The one judgement of how a call ended, shared by `run` and `streamLines`. */
function judge(
  tool: ToolName,
  command: string,
  opts: ExecOptions,
  end: RawEnd,
): { ok: true; exitCode: number } | { ok: false; error: ProbeError } {
  const fail = (kind: ProbeError["kind"], message: string) => ({
    ok: false as const,
    error: { kind, message, command },
  });
  if (end.spawnError !== null) {
    const code = end.spawnError.code ?? "unknown";
    if (code === "EACCES" || code === "EPERM") return fail("not-permitted", `${tool}: ${code}`);
    return fail("exec-failed", `${tool} could not start: ${code} (${end.spawnError.message})`);
  }
  switch (end.stop) {
    case "timeout":
      return fail("timeout", `${tool} did not finish within ${opts.timeoutMs} ms`);
    case "output-cap":
      return fail("output-cap", `${tool} printed more than ${opts.maxBytes} bytes; stopped reading`);
    case "long-line":
      return fail(
        "output-cap",
        `${tool} printed a line longer than ${MAX_LINE_BYTES} bytes; stopped reading`,
      );
    case "reader-failed":
      return fail("garbage", `${tool}: its output could not be read: ${end.stopDetail ?? "unknown"}`);
    case "closed":
      return fail("exec-failed", `${tool} was stopped: the command it ran for is over`);
    case null:
      break;
  }
  if (end.code === null) {
    return fail("exec-failed", `${tool} could not run: killed by ${end.signal ?? "an unknown signal"}`);
  }
  const okCodes = opts.okExitCodes ?? [0];
  if (!okCodes.includes(end.code)) {
    const firstLine = end.stderr.trim().split("\n")[0]?.slice(0, 300) ?? "";
    return fail(
      PERMISSION.test(end.stderr) ? "not-permitted" : "exit-status",
      `${tool} exited ${end.code}${firstLine ? `: ${firstLine}` : ""}`,
    );
  }
  return { ok: true, exitCode: end.code };
}

export class ToolRunner {
  private readonly running = new Set<Call>();
  private closed = false;

  constructor(
    private readonly dirs: readonly string[] = DEFAULT_TOOL_DIRS,
    /** Where the agent's own programs are (tests point it elsewhere to break one). */
    private readonly bundledDir: string = BUNDLED_TOOL_DIR,
    /** Where the witnesses are (tools.ts); a directory without them: they are "not present". */
    private readonly witnessDir: string = DEFAULT_WITNESS_DIR,
  ) {}

  /** Runs a tool with fixed argv, no shell, a timeout and an output cap; never throws. */
  async run(tool: ToolName, args: readonly string[], opts: ExecOptions): Promise<ExecResult> {
    // Decoded as it arrives, each pipe chunk dropped at once: holding the chunks, then their
    // concatenation, then the string made three copies of a 15 MB `nft -j list chains` (10,000
    // Services) outside the V8 heap at once (bench/results/rss.md).
    const decoder = new StringDecoder("utf8");
    const parts: string[] = [];
    let bytes = 0;
    const r = await this.exec(tool, args, opts, (chunk) => {
      bytes += chunk.length;
      if (bytes > opts.maxBytes) return "output-cap";
      parts.push(decoder.write(chunk));
      return null;
    });
    if (!r.ok) return r;
    parts.push(decoder.end());
    return {
      ok: true,
      stdout: parts.join(""),
      stderr: r.end.stderr,
      exitCode: r.exitCode,
      durationMs: r.end.durationMs,
    };
  }

  /**
   * Runs a tool and hands stdout to `onLine` line by line, so large outputs (iptables-save on a big
   * iptables-mode node) are parsed without being held whole. The byte cap and timeout still apply.
   */
  async streamLines(
    tool: ToolName,
    args: readonly string[],
    opts: ExecOptions,
    onLine: (line: string) => void,
  ): Promise<StreamResult> {
    let bytes = 0;
    const decoder = new StringDecoder("utf8");
    const lines = new LineSplitter(onLine);
    const r = await this.exec(tool, args, opts, (chunk) => {
      bytes += chunk.length;
      if (bytes > opts.maxBytes) return "output-cap";
      return lines.push(decoder.write(chunk)) ? null : "long-line";
    });
    if (!r.ok) return r;
    lines.push(decoder.end());
    lines.end();
    return { ok: true, exitCode: r.exitCode, stderr: r.end.stderr };
  }

  /**
   * Ends every call still running (their groups get SIGTERM, then SIGKILL) and fails every later
   * call at once. One-shot commands call it when they are done, so a probe still running past its
   * deadline cannot keep the command alive.
   */
  close(): void {
    this.closed = true;
    for (const c of this.running) c.halt("closed");
  }

  /** The program to start for `tool` and its argv, or why there is none. */
  private locate(
    tool: ToolName,
    args: readonly string[],
  ): { path: string; argv: readonly string[] } | { missing: string } {
    if (isWitnessTool(tool)) {
      const w = witnessCommand(this.witnessDir, tool, args);
      return resolveTool("ld.so", [this.witnessDir]) !== null && readable(w.binary)
        ? { path: w.loader, argv: w.args }
        : {
            missing: `${tool} not found: it needs ${w.loader} and ${w.binary} (a build without the witness)`,
          };
    }
    const where = isBundledTool(tool) ? [this.bundledDir] : this.dirs;
    const path = resolveTool(tool, where);
    return path === null ? { missing: `${tool} not found in ${where.join(":")}` } : { path, argv: args };
  }

  private async exec(
    tool: ToolName,
    args: readonly string[],
    opts: ExecOptions,
    onStdout: (chunk: Buffer) => Stop | null,
  ): Promise<({ ok: true; exitCode: number } & { end: RawEnd }) | { ok: false; error: ProbeError }> {
    const command = describe(tool, args);
    const found = this.locate(tool, args);
    if ("missing" in found) {
      return { ok: false, error: { kind: "missing-tool", message: found.missing, command } };
    }
    const { path, argv } = found;
    if (this.closed) {
      return {
        ok: false,
        error: { kind: "exec-failed", message: `${tool} not started: runner closed`, command },
      };
    }
    const marker = process.env[SUITE_MARKER];
    const call = new Call(
      path,
      argv,
      // Stable, parseable output: no locale, no colour, no pager; nothing inherited.
      {
        LC_ALL: "C",
        LANG: "C",
        PATH: this.dirs.join(":"),
        ...(marker === undefined ? {} : { [SUITE_MARKER]: marker }),
      },
      opts.timeoutMs,
      onStdout,
      (c) => this.running.delete(c),
    );
    if (!call.finished) this.running.add(call);
    const end = await call.ended;
    const verdict = judge(tool, command, opts, end);
    return verdict.ok ? { ...verdict, end } : verdict;
  }
}
