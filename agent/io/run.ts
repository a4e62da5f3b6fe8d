import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { LineSplitter, MAX_LINE_BYTES } from "./lines.js";
import { DEFAULT_TOOL_DIRS, type ToolName } from "./tools.js";
import type { ProbeError } from "../facts/probe-error.js";

export interface ExecOptions {
  timeoutMs: number;
  /** Bytes of stdout beyond which the tool is killed and the call fails with `output-cap`. */
  maxBytes: number;
  /** Exit codes that are answers rather than failures (e.g. `ip` exits 1 for "no such device"). */
  okExitCodes?: readonly number[];
}

export interface ExecOk {
  ok: true;
  stdout: string;
  stderr: string;
  exitCode: number;
  durationMs: number;
}
export type ExecResult = ExecOk | { ok: false; error: ProbeError };

const STDERR_CAP = 64 * 1024;
const PERMISSION = /operation not permitted|permission denied|you must be root|EPERM|EACCES/i;

/** Resolves a tool to an absolute path in the configured directories, or `null`. */
export function resolveTool(tool: ToolName, dirs: readonly string[] = DEFAULT_TOOL_DIRS): string | null {
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

export class ToolRunner {
  constructor(private readonly dirs: readonly string[] = DEFAULT_TOOL_DIRS) {}

  /** Runs a tool with fixed argv, no shell, a timeout and an output cap; never throws. */
  async run(tool: ToolName, args: readonly string[], opts: ExecOptions): Promise<ExecResult> {
    const path = resolveTool(tool, this.dirs);
    const command = describe(tool, args);
    if (path === null) {
      return {
        ok: false,
        error: { kind: "missing-tool", message: `${tool} not found in ${this.dirs.join(":")}`, command },
      };
    }
    const started = performance.now();
    const sub = execa(path, args, {
      shell: false,
      reject: false,
      stdin: "ignore",
      timeout: opts.timeoutMs,
      forceKillAfterDelay: 1000,
      maxBuffer: { stdout: opts.maxBytes, stderr: STDERR_CAP },
      stripFinalNewline: false,
      extendEnv: false,
      // Stable, parseable output: no locale, no colour, no pager.
      env: { LC_ALL: "C", LANG: "C", PATH: this.dirs.join(":") },
      encoding: "utf8",
    });
    const r = await sub;
    const durationMs = performance.now() - started;
    const stdout = typeof r.stdout === "string" ? r.stdout : "";
    const stderr = typeof r.stderr === "string" ? r.stderr : "";
    if (r.timedOut) {
      return {
        ok: false,
        error: { kind: "timeout", message: `${tool} did not finish within ${opts.timeoutMs} ms`, command },
      };
    }
    if (r.isMaxBuffer) {
      return {
        ok: false,
        error: {
          kind: "output-cap",
          message: `${tool} printed more than ${opts.maxBytes} bytes; stopped reading`,
          command,
        },
      };
    }
    const code = (r as { code?: string }).code;
    if (code === "EACCES" || code === "EPERM") {
      return { ok: false, error: { kind: "not-permitted", message: `${tool}: ${code}`, command } };
    }
    if (r.exitCode === undefined) {
      return {
        ok: false,
        error: {
          kind: "exec-failed",
          message: `${tool} could not run: ${r.signal ? `killed by ${r.signal}` : (r.shortMessage ?? "unknown")}`,
          command,
        },
      };
    }
    const okCodes = opts.okExitCodes ?? [0];
    if (!okCodes.includes(r.exitCode)) {
      const firstLine = stderr.trim().split("\n")[0]?.slice(0, 300) ?? "";
      return {
        ok: false,
        error: {
          kind: PERMISSION.test(stderr) ? "not-permitted" : "exit-status",
          message: `${tool} exited ${r.exitCode}${firstLine ? `: ${firstLine}` : ""}`,
          command,
        },
      };
    }
    return { ok: true, stdout, stderr, exitCode: r.exitCode, durationMs };
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
  ): Promise<{ ok: true; exitCode: number; stderr: string } | { ok: false; error: ProbeError }> {
    const path = resolveTool(tool, this.dirs);
    const command = describe(tool, args);
    if (path === null) {
      return {
        ok: false,
        error: { kind: "missing-tool", message: `${tool} not found in ${this.dirs.join(":")}`, command },
      };
    }
    const sub = execa(path, args, {
      shell: false,
      reject: false,
      stdin: "ignore",
      timeout: opts.timeoutMs,
      forceKillAfterDelay: 1000,
      buffer: { stdout: false, stderr: true },
      maxBuffer: { stderr: STDERR_CAP },
      extendEnv: false,
      env: { LC_ALL: "C", LANG: "C", PATH: this.dirs.join(":") },
      encoding: "utf8",
    });
    let bytes = 0;
    let capped = false;
    let longLine = false;
    const lines = new LineSplitter(onLine);
    sub.stdout?.setEncoding("utf8");
    sub.stdout?.on("data", (chunk: string) => {
      if (capped) return;
      bytes += Buffer.byteLength(chunk);
      if (bytes > opts.maxBytes) {
        capped = true;
        sub.kill("SIGKILL");
        return;
      }
      if (!lines.push(chunk)) {
        capped = true;
        longLine = true;
        sub.kill("SIGKILL");
      }
    });
    const r = await sub;
    if (capped) {
      return {
        ok: false,
        error: {
          kind: "output-cap",
          message: longLine
            ? `${tool} printed a line longer than ${MAX_LINE_BYTES} bytes; stopped reading`
            : `${tool} printed more than ${opts.maxBytes} bytes; stopped reading`,
          command,
        },
      };
    }
    if (r.timedOut) {
      return {
        ok: false,
        error: { kind: "timeout", message: `${tool} did not finish within ${opts.timeoutMs} ms`, command },
      };
    }
    lines.end();
    const stderr = typeof r.stderr === "string" ? r.stderr : "";
    if (r.exitCode === undefined) {
      return {
        ok: false,
        error: { kind: "exec-failed", message: `${tool} could not run: ${r.shortMessage ?? ""}`, command },
      };
    }
    const okCodes = opts.okExitCodes ?? [0];
    if (!okCodes.includes(r.exitCode)) {
      const firstLine = stderr.trim().split("\n")[0]?.slice(0, 300) ?? "";
      return {
        ok: false,
        error: {
          kind: PERMISSION.test(stderr) ? "not-permitted" : "exit-status",
          message: `${tool} exited ${r.exitCode}${firstLine ? `: ${firstLine}` : ""}`,
          command,
        },
      };
    }
    return { ok: true, exitCode: r.exitCode, stderr };
  }
}
