// One User-Mode Linux boot for the benchmark: the same guest setup as test/helpers/uml.ts (hostfs
// root, test/helpers/uml/guest-lib.sh, UML's own modules), but long-running, with its console
// streamed to a log file instead of held in memory, and the memory a 10,000-Service node needs.
import { spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface BootOptions {
  repoRoot: string;
  /** Host directory the guest writes results to (on disk, not /tmp: the guest mounts its own). */
  workDir: string;
  script: string;
  memMb: number;
  timeoutMs: number;
  modules: readonly string[];
  consoleLog: string;
}

/**
 * The ptrace shim every UML boot preloads, the tests' and the bench's (test/helpers/uml/xstate-shim.c):
 * without it UML 6.1 cannot run a process on an AMX host. Built by `npm run build`.
 */
export function umlXstateShim(repoRoot: string): string {
  return join(repoRoot, "dist/uml/uml-xstate-shim.so");
}

/** The environment UML itself runs with (the guest's processes get theirs from the guest's init). */
export function umlHostEnv(repoRoot: string, home: string, tmpdir: string): NodeJS.ProcessEnv {
  return {
    PATH: "/usr/sbin:/usr/bin:/sbin:/bin",
    HOME: home,
    TMPDIR: tmpdir,
    LD_PRELOAD: umlXstateShim(repoRoot),
  };
}

export async function bootUmlBench(o: BootOptions): Promise<{ exitCode: number | null; durationMs: number }> {
  const shim = umlXstateShim(o.repoRoot);
  if (!existsSync(shim)) throw new Error(`${shim} is missing: run \`npm run build\``);
  const umlDir = mkdtempSync(join(o.workDir, "uml-"));
  writeFileSync(join(o.workDir, "script.sh"), o.script, { mode: 0o755 });
  const init = join(umlDir, "init.sh");
  writeFileSync(
    init,
    [
      "#!/bin/sh",
      `. ${o.repoRoot}/test/helpers/uml/guest-lib.sh`,
      "proxyscope_mount_basics",
      `proxyscope_load_modules ${o.modules.join(" ")}`,
      "ip link set lo up",
      `export BENCH_WORKDIR=${o.workDir} REPO_ROOT=${o.repoRoot}`,
      `cd ${o.repoRoot}`,
      "echo @@BENCH-BEGIN@@",
      `/bin/sh ${o.workDir}/script.sh </dev/null 2>&1`,
      'echo "@@BENCH-END rc=$?@@"',
      "sync",
      "poweroff -f || halt -f",
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  const started = performance.now();
  const child = spawn(
    "/usr/bin/linux.uml",
    [
      `mem=${o.memMb}M`,
      "root=/dev/root",
      "rootfstype=hostfs",
      "rootflags=/",
      "rw",
      "quiet",
      `umid=pxbench-${process.pid}`,
      `uml_dir=${umlDir}`,
      `init=${init}`,
      "con=null",
      "con0=fd:0,fd:1",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      env: umlHostEnv(o.repoRoot, umlDir, "/dev/shm"),
    },
  );
  const out = createWriteStream(o.consoleLog);
  let exitCode: number | null = null;
  const onData = (b: Buffer) => {
    const s = b.toString("utf8").replace(/\r/g, "");
    out.write(s);
    process.stderr.write(s.replace(/^/gm, "  [uml] "));
    const m = /@@BENCH-END rc=(\d+)@@/.exec(s);
    if (m) exitCode = Number(m[1]);
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // gone
    }
  }, o.timeoutMs);
  await new Promise<void>((r) => child.on("close", () => r()));
  clearTimeout(timer);
  try {
    process.kill(-child.pid!, "SIGKILL"); // UML's helper processes
  } catch {
    // gone
  }
  out.end();
  return { exitCode, durationMs: performance.now() - started };
}
