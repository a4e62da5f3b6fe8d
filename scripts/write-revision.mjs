#!/usr/bin/env node
// Fixes the source revision the build was made from into dist/common/revision.txt, which
// common/version.ts reads for `--version` and the build_info metric's `revision` label:
//   PROXYSCOPE_REVISION (the image build passes it: the Docker context has no .git), else
//   `git rev-parse HEAD` of this checkout, else "unknown".
// Only a hex commit id or "unknown" is written: the value becomes a metric label.
// A build step, not part of either program: git runs with fixed argv, no shell and a timeout.
// eslint-disable-next-line no-restricted-imports
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const COMMIT = /^[0-9a-f]{7,64}$/;

function fromGit() {
  if (!existsSync(join(ROOT, ".git"))) return null;
  const r = spawnSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8", timeout: 10_000 });
  return r.status === 0 ? r.stdout.trim() : null;
}

const given = (process.env.PROXYSCOPE_REVISION ?? "").trim().toLowerCase();
if (given !== "" && given !== "unknown" && !COMMIT.test(given)) {
  process.stderr.write(`write-revision: PROXYSCOPE_REVISION is not a commit id: ${JSON.stringify(given)}\n`);
  process.exit(2);
}
const found = given !== "" ? given : fromGit();
const revision = found !== null && COMMIT.test(found) ? found : "unknown";
mkdirSync(join(ROOT, "dist/common"), { recursive: true });
writeFileSync(join(ROOT, "dist/common/revision.txt"), `${revision}\n`);
