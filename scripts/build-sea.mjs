#!/usr/bin/env node
// Builds the collector / kubectl plugin as one executable that needs no Node.js on the machine:
//   node scripts/build-sea.mjs [TARGET...]   (npm run build:sea)  ->  dist/sea/proxyscope-TARGET
// TARGET: linux-x64, linux-arm64, or on a Mac darwin-x64/darwin-arm64 (signed there); by default this machine's.
// 1. esbuild bundles collector/cli.ts and everything it imports (its npm dependencies too) into one
//    CommonJS file, dist/sea/proxyscope.cjs: a single-executable application runs exactly one script,
//    whose require() loads only Node's built-in modules.
// 2. `node --build-sea` (Node >= 25.5: doc/api/single-executable-applications.md, "Generating single
//    executable applications with --build-sea") copies the running node binary and injects that script.
// The blob must be injected into a node binary of the same version as the one that made it: for another
// platform, that version's official binary from the npm registry. Each executable is cached: a second
// run with the same bundle, configuration and node does nothing.
import { createHash } from "node:crypto";
// A build step, not part of either program: it runs node, npm and tar with fixed argv and no shell.
// eslint-disable-next-line no-restricted-imports
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "dist/sea");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

let esbuild;
try {
  esbuild = await import("esbuild");
} catch {
  process.stderr.write("build-sea: esbuild is not installed (a devDependency): run npm install\n");
  process.exit(1);
}

// common/version.ts reads package.json and the build's revision.txt beside the compiled code at run
// time; the executable has neither beside it, so both are fixed at build time instead.
const revisionFile = join(ROOT, "dist/common/revision.txt");
const revisionText = existsSync(revisionFile) ? readFileSync(revisionFile, "utf8").trim() : "";
const revision = /^[0-9a-f]{7,64}$/.test(revisionText) ? revisionText : "unknown";
const fixedVersion = {
  name: "fixed-version",
  setup(build) {
    build.onLoad({ filter: /[\\/]common[\\/]version\.ts$/ }, () => ({
      contents:
        `export const VERSION: string = ${JSON.stringify(pkg.version)};\n` +
        `export const REVISION: string = ${JSON.stringify(revision)};\n`,
      loader: "ts",
    }));
  },
};

// The targets are checked before any bundling: a refused one costs nothing.
const SUPPORTED = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];
const here = `${process.platform}-${process.arch}`;
const targets = process.argv.slice(2).length > 0 ? process.argv.slice(2) : [here];
for (const target of targets) {
  if (!SUPPORTED.includes(target)) {
    process.stderr.write(`build-sea: unsupported target ${target} (supported: ${SUPPORTED.join(", ")})\n`);
    process.exit(2);
  }
  // macOS kills an arm64 executable whose signature no longer matches its bytes, and injection changes
  // them: it is signed again (ad hoc) after, with the codesign only a Mac has. The npm registry also
  // carries no node-darwin-* binary of current Node versions to inject into from elsewhere.
  if (target.startsWith("darwin-") && target !== here) {
    process.stderr.write(
      `build-sea: ${target} is built on a Mac of that architecture (codesign signs it there)\n`,
    );
    process.exit(2);
  }
}

mkdirSync(OUT, { recursive: true });
const bundle = join(OUT, "proxyscope.cjs");
// The thread that judges agents' answers under a heap limit (collector/gather/answer-judge.ts) is started from
// a file beside the code, which an executable does not have: its bundle is embedded as a string instead.
const worker = await esbuild.build({
  entryPoints: [join(ROOT, "collector/gather/answer-judge-worker.ts")],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: `node${process.versions.node.split(".")[0]}`,
  plugins: [fixedVersion],
  logLevel: "warning",
  logOverride: { "empty-import-meta": "error" },
  write: false,
});
const result = await esbuild.build({
  entryPoints: [join(ROOT, "collector/cli.ts")],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: `node${process.versions.node.split(".")[0]}`,
  outfile: bundle,
  plugins: [fixedVersion],
  define: {
    PROXYSCOPE_EMBEDDED_JUDGE_WORKER: JSON.stringify(worker.outputFiles[0].text),
    // Only the worker file's URL is made from it, and the embedded worker replaces that file.
    "import.meta.url": JSON.stringify("file:///proxyscope-executable/"),
  },
  legalComments: "eof",
  logLevel: "warning",
  // Any import.meta left in the bundle would be empty in CommonJS: fail rather than ship that.
  logOverride: { "empty-import-meta": "error" },
  write: false,
});
// The entry's "#!/usr/bin/env node" line is not JavaScript once the script is embedded.
const code = result.outputFiles[0].text.replace(/^#![^\n]*\n/, "");
writeFileSync(bundle, code);

/** Ad-hoc signs a macOS executable after injection and checks the signature; writes EXE.signed. */
function signOnMac(exe) {
  for (const args of [
    ["--sign", "-", "--force", exe],
    ["--verify", "--strict", exe],
  ]) {
    const r = spawnSync("codesign", args, { encoding: "utf8", timeout: 120_000 });
    if (r.status !== 0) {
      process.stderr.write(`build-sea: codesign ${args.join(" ")} failed: ${r.stderr ?? r.error}\n`);
      process.exit(1);
    }
  }
  writeFileSync(`${exe}.signed`, "codesign --sign - (ad hoc), verified\n");
}

/**
 * The node binary to inject into: this one for this machine's platform; for another, the official
 * binary of the same version from the npm registry's node-<platform> package (the one
 * scripts/setup-debian.sh installs), kept in dist/sea/node/.
 */
function nodeBinary(target) {
  if (target === here) return process.execPath;
  const dir = join(OUT, "node", `${target}-${process.versions.node}`);
  const bin = join(dir, "package/bin/node");
  if (existsSync(bin)) return bin;
  // Unpacked beside it and renamed into place whole: a run stopped half-way never leaves a truncated
  // node that the check above would take as the cached one.
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const spec = `node-${target}@${process.versions.node}`;
  const fail = (why) => {
    rmSync(partial, { recursive: true, force: true });
    process.stderr.write(`build-sea: ${why}\n`);
    process.exit(1);
  };
  const pack = spawnSync("npm", ["pack", spec, "--json", "--pack-destination", partial], {
    encoding: "utf8",
    timeout: 600_000,
  });
  if (pack.status !== 0) fail(`npm pack ${spec} failed: ${pack.stderr}`);
  const tgz = join(partial, JSON.parse(pack.stdout)[0].filename);
  const tar = spawnSync("tar", ["-xzf", tgz, "-C", partial, "package/bin/node"], { encoding: "utf8" });
  rmSync(tgz, { force: true });
  if (tar.status !== 0) fail(`cannot unpack ${spec}: ${tar.stderr}`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(partial, dir);
  return bin;
}

for (const target of targets) {
  const exe = join(OUT, `proxyscope-${target}`);
  const stamp = `${exe}.stamp`;
  const config = join(OUT, `sea-config-${target}.json`);
  const configText = JSON.stringify(
    {
      main: bundle,
      mainFormat: "commonjs",
      output: exe,
      ...(target === here ? {} : { executable: nodeBinary(target) }),
      disableExperimentalSEAWarning: true,
      useSnapshot: false,
      useCodeCache: false,
      // tr46 and whatwg-url (under @kubernetes/client-node) require("punycode"): Node warns of that
      // deprecated built-in only for code outside node_modules, which all bundled code now is.
      execArgv: ["--disable-warning=DEP0040"],
    },
    null,
    2,
  );
  const key = createHash("sha256")
    .update(process.version)
    .update("\0")
    .update(configText)
    .update("\0")
    .update(code)
    .digest("hex");
  if (existsSync(exe) && existsSync(stamp) && readFileSync(stamp, "utf8") === key) {
    process.stdout.write(`build-sea: ${exe} is up to date\n`);
    continue;
  }
  writeFileSync(config, configText);
  rmSync(stamp, { force: true });
  rmSync(`${exe}.signed`, { force: true });
  const r = spawnSync(process.execPath, ["--build-sea", config], { cwd: ROOT, stdio: "inherit" });
  if (r.status !== 0) {
    process.stderr.write(`build-sea: node --build-sea exited ${r.status ?? r.signal}\n`);
    process.exit(1);
  }
  if (target.startsWith("darwin-")) signOnMac(exe);
  writeFileSync(stamp, key);
  process.stdout.write(`build-sea: built ${exe}\n`);
}
