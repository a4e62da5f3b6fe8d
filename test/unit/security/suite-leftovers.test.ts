// The checks `npm test` runs after tap (test/run-suite.mjs): a process carrying the run's marker
// that is still alive fails the run and is named; a process without that run's id is never touched.
// A file left in the run's own TMPDIR fails it too, and is named; the directory is removed.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import t from "tap";
import { adoptGroup, spawnOwned, stopOwned, SUITE_MARKER } from "../../helpers/children.js";
import { processesWith, untilNoneWith } from "../../helpers/procs.js";
import { REPO_ROOT } from "../../helpers/uml.js";

const CHECK = join(REPO_ROOT, "test/run-suite.mjs");

t.test("a leftover fails the check, is named and killed; others are left alone", async (t) => {
  const id = `selftest-${randomBytes(6).toString("hex")}`;
  // A stand-in for a process some test forgot: tagged with the checked id.
  const stray = spawn("/bin/sleep", ["1000000"], {
    detached: true,
    stdio: "ignore",
    env: { PATH: "/usr/bin:/bin", [SUITE_MARKER]: id },
  });
  t.teardown(adoptGroup(stray.pid!, "stray sleep"));
  // Someone else's process (here: this test's own, under the suite's id, not the checked one).
  const bystander = spawnOwned("/bin/sleep", ["1000001"], { stdio: "ignore", owner: t });
  t.equal(processesWith(`${SUITE_MARKER}=${id}`, "env").length, 1, "the stray is running, tagged");

  const r = spawnSync(process.execPath, [CHECK, "--check", id], { encoding: "utf8", timeout: 120_000 });
  t.equal(r.status, 1, "the check fails");
  t.match(
    r.stderr,
    new RegExp(`leftover process from the test suite: pid ${stray.pid}: /bin/sleep 1000000`),
    "and names it",
  );
  t.same(await untilNoneWith(`${SUITE_MARKER}=${id}`), [], "the stray is gone");
  t.equal(bystander.exitCode, null, "the bystander still runs");
  t.ok(
    processesWith("1000001", "argv-or-env").some((p) => p.pid === bystander.pid),
    "(seen in /proc)",
  );

  const again = spawnSync(process.execPath, [CHECK, "--check", id], { encoding: "utf8", timeout: 120_000 });
  t.equal(again.status, 0, `nothing left: the check passes ${again.stderr}`);
  await stopOwned(bystander);
});

t.test("a file a test leaves in TMPDIR fails the run and is named; a tidy run passes", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-suite-selftest-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A project of its own (tap's .tap/ lands there, not in this checkout's) that finds this checkout's tap,
  // without coverage as here (tap fails a run that has none).
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ type: "module", private: true, tap: { "disable-coverage": true } }),
  );
  symlinkSync(join(REPO_ROOT, "node_modules"), join(dir, "node_modules"));
  // Plain node printing TAP: tap runs any file.
  const testFile = (name: string, body: string[]) =>
    writeFileSync(
      join(dir, name),
      [
        'import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";',
        'import { tmpdir } from "node:os";',
        'import { join } from "node:path";',
        ...body,
        'console.log("1..1\\nok 1");',
        "",
      ].join("\n"),
    );
  testFile("leaves.test.mjs", [
    'mkdirSync(join(tmpdir(), "proxyscope-forgotten-dir"));',
    'writeFileSync(join(tmpdir(), "proxyscope-forgotten-file"), "x");',
  ]);
  testFile("tidy.test.mjs", [
    'const d = mkdtempSync(join(tmpdir(), "proxyscope-tidy-"));',
    'writeFileSync(join(d, "f"), "x");',
    "rmSync(d, { recursive: true, force: true });",
  ]);
  // The suite as `npm test` runs it, on one file, outside this tap run (none of its settings).
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(TAP|_TAPJS_)|^NODE_OPTIONS$/.test(k)),
  );
  const suite = (file: string) =>
    spawnSync(process.execPath, [CHECK, file], { cwd: dir, env, encoding: "utf8", timeout: 300_000 });

  const leaves = suite("leaves.test.mjs");
  t.equal(leaves.status, 1, `the run fails: ${leaves.stderr}`);
  const named = [...leaves.stderr.matchAll(/^leftover file from the test suite: (.+)$/gm)].map((m) => m[1]!);
  t.same(
    named.map((p) => basename(p)),
    ["proxyscope-forgotten-dir", "proxyscope-forgotten-file"],
    "each leftover is named (tap's own compile cache is not a leftover)",
  );
  const runTmp = dirname(named[0] ?? "/nonexistent/x");
  t.match(basename(runTmp), /^proxyscope-suite-/, "the test wrote into the run's own TMPDIR");
  t.notOk(existsSync(runTmp), "which is removed");
  t.match(leaves.stderr, /2 file\(s\) it wrote in TMPDIR outlived it \(removed now\); failing the run/);

  const tidy = suite("tidy.test.mjs");
  t.equal(tidy.status, 0, `a tidy run passes: ${tidy.stderr}`);
  const clean = /no file it wrote is left \(TMPDIR=(.+), removed\)/.exec(tidy.stderr);
  t.ok(clean, "and says so");
  t.notOk(existsSync(clean?.[1] ?? "/nonexistent"), "its TMPDIR is removed too");
});
