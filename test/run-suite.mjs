#!/usr/bin/env node
// `npm test`'s test run: tap, with every process the suite starts tagged PROXYSCOPE_TEST_RUN=<id> in its
// environment (inherited; test/helpers/children.ts and agent/io/run.ts pass it on where an environment
// is built by hand), then the check that nothing so tagged is still alive. A leftover fails the run and
// is named; it is then killed, so one bad run does not slow the next. Processes without this run's id
// are never touched.
//
// Files likewise: tap runs with TMPDIR set to a directory of this run's own (os.tmpdir(), mkdtemp, and
// the UML helper's work directories all land there), and whatever is still in it after tap, and after
// the process check, fails the run and is named; the directory is then removed.
//
//   node test/run-suite.mjs [tap args]      the suite
//   node test/run-suite.mjs --check <id>    only the process check, for one id (used by its own test)
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, URL } from "node:url";

const MARKER = "PROXYSCOPE_TEST_RUN";
// After tap, a process being killed may take a moment to go: wait this long before calling it a leftover.
const SETTLE_MS = 10_000;
// What tools keep in the temp dir for their next run, not a test's files: Node's compile cache
// (module.enableCompileCache(), which tsc and eslint call) and tap's TypeScript loader's. They go with
// the directory.
const TOOL_CACHES = /^(node-compile-cache|v8-compile-cache(-\d+)?)$/;

function read(path) {
  try {
    return readFileSync(path, "latin1");
  } catch {
    return null;
  }
}

/** Live processes whose environment holds MARKER=<id> (zombies excluded), this one excluded. */
export function tagged(id) {
  const want = `${MARKER}=${id}`;
  const out = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const env = read(`/proc/${name}/environ`);
    if (env === null || !env.split("\0").includes(want)) continue;
    const stat = read(`/proc/${name}/stat`) ?? "";
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    if (state === "Z" || state === "X" || stat === "") continue;
    const cmdline = (read(`/proc/${name}/cmdline`) ?? "").split("\0").join(" ").trim();
    out.push({ pid: Number(name), cmdline });
  }
  return out;
}

/** Waits for the tagged processes to go; names, kills and returns those that do not. */
export async function check(id) {
  const end = Date.now() + SETTLE_MS;
  let left = tagged(id);
  while (left.length > 0 && Date.now() < end) {
    await sleep(200);
    left = tagged(id);
  }
  for (const p of left) {
    process.stderr.write(`leftover process from the test suite: pid ${p.pid}: ${p.cmdline.slice(0, 300)}\n`);
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  return left;
}

/**
 * The run's own temp directory: under the temp dir, unless that is /tmp or /run, which a UML guest
 * hides (test/helpers/uml.ts puts its work directories in TMPDIR when the guest can see it): then
 * under /var/tmp. A run started by a test lands in that test's run's directory. Open to all, sticky, as
 * /tmp is: a test's unprivileged process (interlock-owner's listener runs as nobody) reaches its files.
 */
export function suiteTmpdir() {
  const parent = /^\/(tmp|run)(\/|$)/.test(tmpdir()) ? "/var/tmp" : tmpdir();
  const dir = mkdtempSync(join(parent, "proxyscope-suite-"));
  chmodSync(dir, 0o1777);
  return dir;
}

/** Names what is left in `dir` (tool caches aside), removes `dir`, and returns those names. */
export function checkFiles(dir) {
  const left = readdirSync(dir)
    .filter((name) => !TOOL_CACHES.test(name))
    .sort();
  for (const name of left) process.stderr.write(`leftover file from the test suite: ${join(dir, name)}\n`);
  rmSync(dir, { recursive: true, force: true });
  return left;
}

async function main(argv) {
  if (argv[0] === "--check") {
    const left = await check(argv[1] ?? "");
    return left.length === 0 ? 0 : 1;
  }
  const id = `${Date.now()}-${randomBytes(4).toString("hex")}`;
  const tmp = suiteTmpdir();
  const tap = fileURLToPath(new URL("../node_modules/.bin/tap", import.meta.url));
  const child = spawn(tap, argv, { stdio: "inherit", env: { ...process.env, [MARKER]: id, TMPDIR: tmp } });
  // Stopped early, the checks still run: Ctrl-C reaches tap too (one process group), a SIGTERM or
  // SIGHUP sent to this process alone is passed on.
  process.on("SIGINT", () => {});
  for (const sig of ["SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
  const status = await new Promise((resolve) => {
    child.on("error", () => resolve(1));
    child.on("exit", (code) => resolve(code ?? 1));
  });
  let failed = false;
  const left = await check(id);
  if (left.length > 0) {
    process.stderr.write(
      `test suite: ${left.length} process(es) it started outlived it (killed now); failing the run\n`,
    );
    failed = true;
  } else {
    process.stderr.write(`test suite: no process it started is still running (${MARKER}=${id})\n`);
  }
  const files = checkFiles(tmp);
  if (files.length > 0) {
    process.stderr.write(
      `test suite: ${files.length} file(s) it wrote in TMPDIR outlived it (removed now); failing the run\n`,
    );
    failed = true;
  } else {
    process.stderr.write(`test suite: no file it wrote is left (TMPDIR=${tmp}, removed)\n`);
  }
  return failed ? 1 : status;
}

process.exitCode = await main(process.argv.slice(2));
