#!/usr/bin/env node
// Packs each built single executable (scripts/build-sea.mjs) as the release asset krew installs:
//   node scripts/sea-archive.mjs [TARGET...]   ->  dist/release/kubectl-proxyscope_vVERSION_OS_ARCH.tar.gz
// TARGET: linux-x64, linux-arm64, darwin-x64, darwin-arm64 (default: those built). Each archive holds
// `kubectl-proxyscope` (mode 0755) and LICENSE, and its sha256 is written beside it (NAME.sha256, in
// sha256sum's format). The archive is byte-for-byte the same for the same executable: names sorted,
// owner 0, mtime 0, gzip without a name or time. A darwin executable is built and signed on a Mac
// (the release's sea-darwin job) and packed here only with the EXE.signed mark build-sea.mjs wrote there.
import { createHash } from "node:crypto";
// A build step, not part of either program: it runs tar with fixed argv and no shell.
// eslint-disable-next-line no-restricted-imports
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const SEA = join(ROOT, "dist/sea");
const OUT = join(ROOT, "dist/release");
const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
/** Node's platform-arch -> krew's os/arch (Go's GOOS/GOARCH, which krew's selectors match). */
const KREW = {
  "linux-x64": ["linux", "amd64"],
  "linux-arm64": ["linux", "arm64"],
  "darwin-x64": ["darwin", "amd64"],
  "darwin-arm64": ["darwin", "arm64"],
};

const asked = process.argv.slice(2);
const targets =
  asked.length > 0 ? asked : Object.keys(KREW).filter((t) => existsSync(join(SEA, `proxyscope-${t}`)));
if (targets.length === 0) {
  process.stderr.write("sea-archive: no executable in dist/sea: run node scripts/build-sea.mjs first\n");
  process.exit(1);
}
mkdirSync(OUT, { recursive: true });
for (const target of targets) {
  const krew = KREW[target];
  if (!krew) {
    process.stderr.write(
      `sea-archive: unsupported target ${target} (supported: ${Object.keys(KREW).join(", ")})\n`,
    );
    process.exit(2);
  }
  const exe = join(SEA, `proxyscope-${target}`);
  if (!existsSync(exe)) {
    process.stderr.write(`sea-archive: ${exe} is not built: node scripts/build-sea.mjs ${target}\n`);
    process.exit(1);
  }
  // An unsigned macOS executable is killed at its first run on Apple silicon: never pack one.
  if (target.startsWith("darwin-") && !existsSync(`${exe}.signed`)) {
    process.stderr.write(`sea-archive: ${exe} was not signed on a Mac (no ${exe}.signed): not packed\n`);
    process.exit(1);
  }
  const stage = join(OUT, `stage-${target}`);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage);
  copyFileSync(exe, join(stage, "kubectl-proxyscope"));
  chmodSync(join(stage, "kubectl-proxyscope"), 0o755);
  copyFileSync(join(ROOT, "LICENSE"), join(stage, "LICENSE"));
  chmodSync(join(stage, "LICENSE"), 0o644);
  const tarFile = join(OUT, `stage-${target}.tar`);
  const tar = spawnSync(
    "tar",
    [
      ...["--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--mtime=@0", "--format=gnu"],
      ...["-cf", tarFile, "-C", stage, "kubectl-proxyscope", "LICENSE"],
    ],
    { encoding: "utf8" },
  );
  if (tar.status !== 0) {
    process.stderr.write(`sea-archive: tar failed: ${tar.stderr}\n`);
    process.exit(1);
  }
  const name = `kubectl-proxyscope_v${version}_${krew[0]}_${krew[1]}.tar.gz`;
  // zlib's gzip header carries no file name and mtime 0: the same tar gives the same bytes.
  const gz = gzipSync(readFileSync(tarFile), { level: 9 });
  rmSync(tarFile, { force: true });
  rmSync(stage, { recursive: true, force: true });
  writeFileSync(join(OUT, name), gz);
  const sha = createHash("sha256").update(gz).digest("hex");
  writeFileSync(join(OUT, `${name}.sha256`), `${sha}  ${name}\n`);
  process.stdout.write(`${join("dist/release", name)} ${sha}\n`);
}
