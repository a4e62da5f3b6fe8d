// Runs the built agent (`dist/agent/cli.js serve`) as a real process, on the host's loopback or
// inside a named network namespace, and talks HTTP to it from wherever it listens.
import { spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveTool } from "../../agent/io/run.js";
import { TOOLS, type ToolName } from "../../agent/io/tools.js";
import { AGENT_CLI } from "../helpers/standin.js";
import { spawnOwned } from "../helpers/children.js";

export interface AgentLogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

export interface RunningAgent {
  url: string;
  port: number;
  /** The agent's process id (a wrapper such as prlimit or setpriv execs it in place). */
  pid: number;
  logs(): AgentLogLine[];
  /** Resolves once `n` scans have completed (from the agent's own log). */
  scans(n: number): Promise<void>;
  /** GET from where the agent listens (inside its namespace when it has one). */
  get(path: string): Promise<{ status: number; headers: Record<string, string>; body: string }>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  alive(): boolean;
}

export interface AgentOptions {
  args?: string[];
  netns?: string;
  /** argv put before node, e.g. ["setpriv", "--bounding-set=-net_admin", "--"]. */
  wrap?: string[];
}

export function agentBuilt(): boolean {
  return existsSync(AGENT_CLI);
}

export async function startAgent(opts: AgentOptions = {}): Promise<RunningAgent> {
  const argv = [
    ...(opts.netns ? ["ip", "netns", "exec", opts.netns] : []),
    ...(opts.wrap ?? []),
    process.execPath,
    AGENT_CLI,
    "serve",
    "--listen",
    "127.0.0.1",
    "--port",
    "0",
    "--node",
    "e2e-node",
    ...(opts.args ?? []),
  ];
  const child: ChildProcess = spawnOwned(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
  const lines: AgentLogLine[] = [];
  let stderr = "";
  let pending = "";
  let exitCode: number | null | undefined;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  child.stdout!.setEncoding("utf8").on("data", (d: string) => {
    pending += d;
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      try {
        lines.push(JSON.parse(line) as AgentLogLine);
      } catch {
        lines.push({ level: 0, msg: `unparsable log line: ${line}` });
      }
    }
    wake();
  });
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<number | null>((r) =>
    child.once("exit", (code) => {
      exitCode = code;
      wake();
      r(code);
    }),
  );

  // A signal (a log line or the exit) ends the wait; the deadline is only a last resort for a stuck agent.
  const until = (cond: () => boolean, what: string, timeoutMs = 300_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (cond()) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        } else if (exitCode !== undefined) {
          waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`agent exited ${exitCode} while waiting for ${what}:\n${stderr}`));
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`agent: no ${what} within ${timeoutMs} ms:\n${stderr}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });

  await until(() => lines.some((l) => l.msg === "listening"), "listening line");
  const port = Number(lines.find((l) => l.msg === "listening")!.port);
  const url = `http://127.0.0.1:${port}`;

  const get: RunningAgent["get"] = async (path) => {
    if (!opts.netns) {
      const r = await fetch(`${url}${path}`);
      return { status: r.status, headers: Object.fromEntries(r.headers), body: await r.text() };
    }
    // From inside the namespace: a one-line fetch run there, answering in JSON.
    const script =
      "const r=await fetch(process.argv[1]);" +
      "process.stdout.write(JSON.stringify({status:r.status,headers:Object.fromEntries(r.headers),body:await r.text()}))";
    const r = spawnSync(
      "ip",
      ["netns", "exec", opts.netns, process.execPath, "--input-type=module", "-e", script, `${url}${path}`],
      { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
    );
    if (r.status !== 0) throw new Error(`GET ${path} in ${opts.netns}: ${r.stderr}`);
    return JSON.parse(r.stdout) as Awaited<ReturnType<RunningAgent["get"]>>;
  };

  return {
    url,
    port,
    pid: child.pid!,
    logs: () => lines,
    scans: (n) => until(() => lines.filter((l) => l.msg === "scan complete").length >= n, `${n} scans`),
    get,
    alive: () => exitCode === undefined,
    stop: async () => {
      if (exitCode === undefined) {
        child.kill("SIGTERM");
        const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
        const code = await exited;
        clearTimeout(killer);
        return code;
      }
      return exitCode;
    },
  };
}

/**
 * A tool dir with every real tool the agent runs, linked from where the host has it, except the ones
 * given: `null` leaves a tool out (missing), a string is a /bin/sh script body put in its place.
 */
export function toolDirWith(replace: Partial<Record<ToolName, string | null>>): {
  dir: string;
  remove(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-e2e-tools-"));
  for (const tool of Object.keys(TOOLS) as ToolName[]) {
    const r = replace[tool];
    if (r === null) continue;
    if (typeof r === "string") {
      writeFileSync(join(dir, tool), `#!/bin/sh\n${r}\n`);
      chmodSync(join(dir, tool), 0o755);
      continue;
    }
    const real = resolveTool(tool);
    if (real !== null) symlinkSync(real, join(dir, tool));
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Sample value of one series in an exposition ("name{labels}" exactly as printed), or undefined. */
export function sample(exposition: string, series: string): string | undefined {
  const line = exposition.split("\n").find((l) => l.startsWith(`${series} `));
  return line?.slice(series.length + 1);
}
