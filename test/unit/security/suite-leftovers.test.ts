// The check `npm test` runs after tap (test/run-suite.mjs): a process carrying the run's marker
// that is still alive fails the run and is named; a process without that run's id is never touched.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
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
