// build_info's `revision` label: scripts/write-revision.mjs fixes the commit into the build, and
// common/version.ts reads only a hex commit id or says "unknown" (the value is a metric label).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { REVISION } from "../../../common/version.js";
import { REPO_ROOT } from "../../helpers/uml.js";

t.test("the revision read at load is a commit id or unknown, and the built one", async (t) => {
  t.match(REVISION, /^(?:[0-9a-f]{7,64}|unknown)$/);
  const file = join(REPO_ROOT, "dist/common/revision.txt");
  if (!existsSync(file)) {
    t.equal(REVISION, "unknown", "no build: unknown, never a guess");
    return;
  }
  const built = readFileSync(file, "utf8").trim();
  t.equal(REVISION, /^[0-9a-f]{7,64}$/.test(built) ? built : "unknown", "what the build wrote");
});

t.test("write-revision refuses a revision that is not a commit id, and writes nothing", async (t) => {
  const file = join(REPO_ROOT, "dist/common/revision.txt");
  const before = existsSync(file) ? readFileSync(file, "utf8") : null;
  const r = spawnSync(process.execPath, ["scripts/write-revision.mjs"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, PROXYSCOPE_REVISION: 'main"} 1\nproxyscope_evil 1' },
  });
  t.equal(r.status, 2, r.stderr);
  t.match(r.stderr, /not a commit id/);
  t.equal(existsSync(file) ? readFileSync(file, "utf8") : null, before, "the built file is untouched");
});
