// The krew manifest (plugins/proxyscope.yaml in krew-index) is generated from the release archives the
// tests build: both linux executables (scripts/build-sea.mjs), packed by scripts/sea-archive.mjs, hashed
// and listed by scripts/krew-manifest.mjs, then held to krew's own validation rules
// (test/helpers/krew-validation.ts, ported from kubernetes-sigs/krew) and to what krew does when it
// installs: the sha256 it checks is the archive's, every `files[].from` and the `bin` are in it, and the
// linux-x64 executable unpacked from its archive runs. darwin executables are built and signed on a Mac
// (the release's sea-darwin job); here, sea-archive's refusal of an unsigned one is tried, and a darwin
// asset made elsewhere goes in by URL and sha256.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { parse } from "yaml";
import { krewErrors } from "../../helpers/krew-validation.js";
import { REPO_ROOT } from "../../helpers/uml.js";

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string })
  .version;
const BASE = `https://github.com/proxyscope/proxyscope/releases/download/v${VERSION}`;
const archive = (arch: string) =>
  join(REPO_ROOT, "dist/release", `kubectl-proxyscope_v${VERSION}_linux_${arch}.tar.gz`);
const node = (args: string[]) =>
  spawnSync(process.execPath, args, { cwd: REPO_ROOT, encoding: "utf8", timeout: 540_000 });
const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

t.test("the krew manifest of the linux archives passes krew's validation", async (t) => {
  const build = node(["scripts/build-sea.mjs", "linux-x64", "linux-arm64"]);
  t.equal(build.status, 0, `build-sea.mjs: ${build.stderr}`);
  const pack = node(["scripts/sea-archive.mjs", "linux-x64", "linux-arm64"]);
  t.equal(pack.status, 0, `sea-archive.mjs: ${pack.stderr}`);
  if (build.status !== 0 || pack.status !== 0) return;
  const work = mkdtempSync(join(tmpdir(), "proxyscope-krew-"));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));

  await t.test("an archive is the same bytes when packed again", async (t) => {
    const first = sha(archive("amd64"));
    t.equal(node(["scripts/sea-archive.mjs", "linux-x64"]).status, 0);
    t.equal(sha(archive("amd64")), first);
    t.equal(
      readFileSync(`${archive("amd64")}.sha256`, "utf8"),
      `${first}  ${archive("amd64").split("/").pop()}\n`,
    );
  });

  const out = join(work, "proxyscope.yaml");
  const gen = node([
    "scripts/krew-manifest.mjs",
    ...["--base-url", BASE, "--archive", archive("amd64"), "--archive", archive("arm64"), "--out", out],
  ]);
  t.equal(gen.status, 0, gen.stderr);
  const manifest = parse(readFileSync(out, "utf8"));

  await t.test("krew's rules", async (t) => {
    t.same(krewErrors(out, manifest), []);
    t.equal(manifest.spec.version, `v${VERSION}`);
    t.same(
      manifest.spec.platforms.map((p: { selector: { matchLabels: object } }) => p.selector.matchLabels),
      [
        { os: "linux", arch: "amd64" },
        { os: "linux", arch: "arm64" },
      ],
    );
  });

  await t.test("what krew install checks: the hash, the files, the bin", async (t) => {
    for (const [i, arch] of ["amd64", "arm64"].entries()) {
      const p = manifest.spec.platforms[i];
      t.equal(p.uri, `${BASE}/kubectl-proxyscope_v${VERSION}_linux_${arch}.tar.gz`);
      t.equal(p.sha256, sha(archive(arch)), `${arch}: the archive's sha256`);
      const list = spawnSync("tar", ["-tzf", archive(arch)], { encoding: "utf8" });
      const names = list.stdout.split("\n").filter(Boolean);
      for (const f of p.files as { from: string }[])
        t.ok(names.includes(f.from), `${arch}: ${f.from} in the archive`);
      t.ok(names.includes(p.bin), `${arch}: bin ${p.bin} in the archive`);
    }
    if (process.arch !== "x64") return;
    const dir = join(work, "unpacked");
    spawnSync("mkdir", [dir]);
    t.equal(spawnSync("tar", ["-xzf", archive("amd64"), "-C", dir]).status, 0);
    const run = spawnSync(join(dir, manifest.spec.platforms[0].bin), ["--version"], {
      env: {},
      encoding: "utf8",
    });
    t.equal(run.stdout, `proxyscope ${VERSION}\n`, "the unpacked plugin runs with no Node.js");
  });

  await t.test("a darwin asset built elsewhere goes in by URL and sha256", async (t) => {
    const both = join(work, "with-darwin", "proxyscope.yaml");
    const darwinSha = sha(archive("arm64")); // any real sha256; the asset itself is not here
    const r = node([
      "scripts/krew-manifest.mjs",
      ...["--base-url", BASE, "--archive", archive("amd64"), "--out", both],
      ...["--asset", `darwin/arm64=${BASE}/kubectl-proxyscope_v${VERSION}_darwin_arm64.tar.gz#${darwinSha}`],
    ]);
    t.equal(r.status, 0, r.stderr);
    const m = parse(readFileSync(both, "utf8"));
    t.same(krewErrors(both, m), []);
    t.same(
      m.spec.platforms.map((p: { selector: { matchLabels: { os: string } } }) => p.selector.matchLabels.os),
      ["darwin", "linux"],
    );
  });

  await t.test("the generator refuses what krew would", async (t) => {
    const bad = (args: string[], why: RegExp) => {
      const r = node(["scripts/krew-manifest.mjs", "--out", join(work, "bad.yaml"), ...args]);
      t.equal(r.status, 2, args.join(" "));
      t.match(r.stderr, why);
    };
    bad(["--asset", `linux/amd64=${BASE}/x.tar.gz#ABC`], /not 64 lower-case hex digits/);
    bad(["--asset", `plan9/amd64=${BASE}/x.tar.gz#${"a".repeat(64)}`], /not a platform krew installs/);
    bad(["--version", "0.1.0", "--base-url", BASE, "--archive", archive("amd64")], /the v prefix/);
    bad(["--archive", archive("amd64")], /needs --base-url/);
    bad([], /no platform/);
  });

  await t.test("the validator can fail: each rule on a broken copy", async (t) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed manifest, broken on purpose
    const broken = (edit: (m: any) => void, why: RegExp) => {
      const m = structuredClone(manifest);
      edit(m);
      t.match(krewErrors(out, m).join("\n"), why);
    };
    broken((m) => (m.apiVersion = "krew.googlecontainertools.github.com/v1alpha1"), /apiVersion/);
    broken((m) => (m.metadata.name = "proxy-scope"), /should be named "proxyscope"/);
    broken((m) => (m.spec.version = "0.1.0"), /failed to parse plugin version/);
    broken((m) => (m.spec.platforms[0].sha256 = "A".repeat(64)), /sha256 value .* is not valid/);
    broken((m) => delete m.spec.platforms[0].bin, /bin has to be set/);
    broken((m) => (m.spec.platforms[0].files = []), /file operations/);
    broken((m) => (m.spec.platforms[0].selector.matchLabels.distro = "debian"), /key "distro" not supported/);
    broken(
      (m) => (m.spec.platforms[1].selector = m.spec.platforms[0].selector),
      /overlapping|select os=linux\/arch=amd64/,
    );
    broken(
      (m) => (m.spec.platforms[0].selector = { matchLabels: { os: "plan9" } }),
      /doesn't match any supported/,
    );
    t.match(krewErrors(join(work, "proxyscope.yml"), manifest).join("\n"), /extension/);
  });
});

// A macOS executable comes from the release's Mac jobs, signed there; an unsigned one must never be
// packed (Apple silicon kills it at its first run). Tried in a copy of the script's tree, so the
// repository's dist/sea never holds a stand-in darwin file another test could pick up.
t.test("sea-archive packs a darwin executable only when it was signed on a Mac", async (t) => {
  const tree = mkdtempSync(join(tmpdir(), "proxyscope-sea-archive-"));
  t.teardown(() => rmSync(tree, { recursive: true, force: true }));
  mkdirSync(join(tree, "scripts"));
  mkdirSync(join(tree, "dist/sea"), { recursive: true });
  for (const f of ["scripts/sea-archive.mjs", "package.json", "LICENSE"])
    copyFileSync(join(REPO_ROOT, f), join(tree, f));
  const exe = join(tree, "dist/sea/proxyscope-darwin-arm64");
  writeFileSync(exe, "a stand-in for a Mach-O executable\n");
  const pack = () =>
    spawnSync(process.execPath, [join(tree, "scripts/sea-archive.mjs"), "darwin-arm64"], {
      cwd: tree,
      encoding: "utf8",
      timeout: 60_000,
    });
  const unsigned = pack();
  t.equal(unsigned.status, 1, "refused");
  t.match(unsigned.stderr, /was not signed on a Mac/);
  t.notOk(
    existsSync(join(tree, `dist/release/kubectl-proxyscope_v${VERSION}_darwin_arm64.tar.gz`)),
    "no archive",
  );
  writeFileSync(`${exe}.signed`, "codesign --sign - (ad hoc), verified\n");
  const signed = pack();
  t.equal(signed.status, 0, signed.stderr);
  t.ok(existsSync(join(tree, `dist/release/kubectl-proxyscope_v${VERSION}_darwin_arm64.tar.gz`)), "packed");
});

t.test("build-sea refuses a darwin target off a Mac, naming why", async (t) => {
  if (process.platform === "darwin") {
    t.pass("this is a Mac: the target is built here");
    return;
  }
  const r = node(["scripts/build-sea.mjs", "darwin-arm64"]);
  t.equal(r.status, 2);
  t.match(r.stderr, /built on a Mac of that architecture/);
});
