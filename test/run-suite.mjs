#!/usr/bin/env node
// `npm test`'s test run: tap, with every process the suite starts tagged PROXYSCOPE_TEST_RUN=<id> in its
// environment (inherited; test/helpers/children.ts and agent/io/run.ts pass it on where an environment
// is built by hand), then the check that nothing so tagged is still alive. A leftover fails the run and
// is named; it is then killed, so one bad run does not slow the next. Processes without this run's id
// are never touched.
//
//   node test/run-suite.mjs [tap args]      the suite
//   node test/run-suite.mjs --check <id>    only the check, for one id (used by its own test)
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, URL } from "node:url";

const MARKER = "PROXYSCOPE_TEST_RUN";
// After tap, a process being killed may take a moment to go: wait this long before calling it a leftover.
const SETTLE_MS = 10_000;

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

async function main(argv) {
  if (argv[0] === "--check") {
    const left = await check(argv[1] ?? "");
    return left.length === 0 ? 0 : 1;
  }
  const id = `${Date.now()}-${randomBytes(4).toString("hex")}`;
  const tap = fileURLToPath(new URL("../node_modules/.bin/tap", import.meta.url));
  const r = spawnSync(tap, argv, { stdio: "inherit", env: { ...process.env, [MARKER]: id } });
  const left = await check(id);
  if (left.length > 0) {
    process.stderr.write(
      `test suite: ${left.length} process(es) it started outlived it (killed now); failing the run\n`,
    );
    return 1;
  }
  process.stderr.write(`test suite: no process it started is still running (${MARKER}=${id})\n`);
  return r.status ?? 1;
}

process.exitCode = await main(process.argv.slice(2));
