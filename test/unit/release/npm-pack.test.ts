// What `npm pack` ships: in a clean copy of the tracked files (with a dist/ holding what a developer's
// build leaves there: the native helper, test helpers, compiled tests and bench, the single executable),
// `npm pack` must build the JavaScript itself (prepack) and ship exactly the agent, the collector, the
// code both import, LICENSE, README and CHANGELOG: no TypeScript sources, tests, bench, source maps, or
// the Linux-only native helper (the image has that; a laptop on any OS installs this package without a
// C compiler). Then the packed bins run from the extracted tarball, with the dependencies the lockfile
// installed beside it, as `npm install -g` would link them.
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import t from "tap";
import { REPO_ROOT } from "../../helpers/uml.js";

const UNDER_TEST = ["package.json", "scripts/build-sea.mjs"];

function trackedFiles(): string[] {
  const r = spawnSync("git", ["ls-files", "-z"], { cwd: REPO_ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ls-files: ${r.stderr}`);
  return [...new Set([...r.stdout.split("\0").filter(Boolean), ...UNDER_TEST])].filter((f) =>
    existsSync(join(REPO_ROOT, f)),
  );
}

// What a developer's `npm run build` and `npm run build:sea` leave in dist/, none of which may ship.
const LEFT_IN_DIST = [
  "dist/agent/native/proxyscope-nft-generation",
  "dist/agent/cli.js.map",
  "dist/test/standins/apiserver.js",
  "dist/test-helpers/pause-standin",
  "dist/uml/uml-xstate-shim.so",
  "dist/bench/run.js",
  "dist/sea/proxyscope-linux-x64",
];

// The demo's sample node reports (collector/demo/*.json) are data `report --demo` imports; the build's
// revision.txt is build_info's `revision` label (scripts/write-revision.mjs).
const SHIPPED =
  /^(dist\/(agent|collector|common)\/.+\.js|dist\/collector\/demo\/[a-z0-9-]+\.json|dist\/common\/revision\.txt|LICENSE|README\.md|CHANGELOG\.md|package\.json)$/;

t.test("npm pack ships the built programs and nothing else", async (t) => {
  const work = mkdtempSync(join(tmpdir(), "proxyscope-pack-"));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  const src = join(work, "src");
  for (const f of trackedFiles()) {
    mkdirSync(dirname(join(src, f)), { recursive: true });
    // Tracked symlinks (fixtures) stay symlinks.
    if (lstatSync(join(REPO_ROOT, f)).isSymbolicLink())
      symlinkSync(readlinkSync(join(REPO_ROOT, f)), join(src, f));
    else copyFileSync(join(REPO_ROOT, f), join(src, f));
  }
  symlinkSync(join(REPO_ROOT, "node_modules"), join(src, "node_modules"));
  for (const f of LEFT_IN_DIST) {
    mkdirSync(dirname(join(src, f)), { recursive: true });
    writeFileSync(join(src, f), "left by an earlier build\n");
  }

  const out = join(work, "out");
  mkdirSync(out);
  const pack = spawnSync("npm", ["pack", "--json", "--pack-destination", out], {
    cwd: src,
    encoding: "utf8",
    timeout: 540_000,
    env: { ...process.env, npm_config_update_notifier: "false" },
  });
  t.equal(pack.status, 0, `npm pack: ${pack.stderr}`);
  if (pack.status !== 0) return;
  const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string; mode: number }[] }[];
  const files = info!.files.map((f) => f.path).sort();

  t.same(
    files.filter((f) => !SHIPPED.test(f)),
    [],
    "only the compiled programs, LICENSE, README, CHANGELOG and package.json",
  );
  for (const f of [
    "dist/collector/cli.js",
    "dist/agent/cli.js",
    "dist/common/version.js",
    "dist/agent/contract.js",
    "dist/common/revision.txt",
  ])
    t.ok(files.includes(f), `${f} is built and shipped`);
  for (const f of ["LICENSE", "README.md", "CHANGELOG.md"]) t.ok(files.includes(f), `${f} ships`);
  const pkg = JSON.parse(readFileSync(join(src, "package.json"), "utf8")) as {
    version: string;
    bin: Record<string, string>;
    engines: { node: string };
    scripts: Record<string, string>;
  };
  for (const [name, target] of Object.entries(pkg.bin)) {
    const entry = info!.files.find((f) => f.path === target);
    t.ok(entry, `bin ${name} -> ${target} is in the package`);
    t.equal((entry?.mode ?? 0) & 0o111, 0o111, `bin ${name} is executable`);
  }
  t.match(pkg.engines.node, /^>=\d+/, "engines names the Node.js it needs");
  for (const s of ["preinstall", "install", "postinstall"])
    t.notOk(pkg.scripts[s], `no ${s} script: installing needs no compiler and runs nothing`);

  // Install as npm would: the tarball unpacked, its dependencies beside it, the bins linked on PATH.
  const unpacked = join(work, "unpacked");
  mkdirSync(unpacked);
  const tar = spawnSync("tar", ["-xzf", join(out, info!.filename), "-C", unpacked], { encoding: "utf8" });
  t.equal(tar.status, 0, tar.stderr);
  const root = join(unpacked, "package");
  symlinkSync(join(REPO_ROOT, "node_modules"), join(root, "node_modules"));
  const bin = join(work, "bin");
  mkdirSync(bin);
  for (const [name, target] of Object.entries(pkg.bin)) symlinkSync(join(root, target), join(bin, name));
  const run = (name: string, args: string[]) =>
    spawnSync(join(bin, name), args, {
      cwd: work,
      encoding: "utf8",
      timeout: 120_000,
      env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, NO_COLOR: "1" },
    });

  const version = run("proxyscope", ["--version"]);
  t.equal(version.status, 0, version.stderr);
  t.equal(version.stdout, `proxyscope ${pkg.version}\n`, "the packed package.json's version");
  const help = run("kubectl-proxyscope", ["--help"]);
  t.equal(help.status, 0, help.stderr);
  t.match(help.stdout, /kubectl proxyscope <command> \[flags\]/);
  const report = run("proxyscope", ["report", "--help"]);
  t.equal(report.status, 0, report.stderr);
  t.match(report.stdout, /--agents-file/);
  const demo = run("proxyscope", ["report", "--demo"]);
  t.equal(demo.status, 0, `report --demo from the installed package: ${demo.stderr}`);
  t.match(demo.stdout, /^DEMO: a sample fleet/);
  const agent = run("proxyscope-agent", ["--version"]);
  t.equal(agent.status, 0, agent.stderr);
  t.match(agent.stdout, pkg.version);
});
