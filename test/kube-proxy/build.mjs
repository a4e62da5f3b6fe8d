#!/usr/bin/env node
// Builds the REAL kube-proxy, from the Kubernetes release's own Go module, for the tests that run it
// (test/kernel/real-kube-proxy-*.test.ts). Nothing of kube-proxy's source or module graph is kept in
// this repository: the build module's go.mod is generated here from k8s.io/kubernetes' own go.mod.
//
// k8s.io/kubernetes replaces each k8s.io/X staging module with ./staging/src/k8s.io/X, a directory a
// module consumer does not have; the same code is published as k8s.io/X v0.<minor>.<patch>, so the
// build module replaces each one with that version (the way out-of-tree consumers of k8s.io/kubernetes
// build it). The binary is cached outside the checkout, keyed by version, and reused when it answers
// `--version` with that version:
//   ${XDG_CACHE_HOME:-$HOME/.cache}/proxyscope/kube-proxy/<version>/kube-proxy
//
//   node test/kube-proxy/build.mjs                  every version in VERSIONS
//   node test/kube-proxy/build.mjs v1.34.4 ...      those versions
//   node test/kube-proxy/build.mjs --path v1.34.4   prints the cached binary's path (no build)
//
// Needs `go` (a toolchain new enough for the release: k8s.io/kubernetes' go directive; GOTOOLCHAIN=auto
// lets an older go >= 1.21 fetch it from the module proxy) and the module proxy. A missing piece is a
// named error naming the command and what it said; nothing half-built is left in the cache.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import process from "node:process";

/** The kube-proxy releases the suite runs for real: the newest patch of three lines. */
export const VERSIONS = ["v1.31.14", "v1.34.4", "v1.37.2"];

/**
 * Staging modules the module proxy does not serve at the release's own v0.<minor>.<patch>, and the
 * version used instead. k8s.io/kube-proxy v0.31.14 is "not available" on proxy.golang.org; that module
 * holds only kube-proxy's versioned config types (config/v1alpha1), which a patch release does not change.
 */
const STAGING_OVERRIDES = { "v1.31.14": { "k8s.io/kube-proxy": "v0.31.11" } };

export class BuildError extends Error {
  constructor(command, detail) {
    super(`kube-proxy build: \`${command.join(" ")}\` failed: ${detail}`);
    this.name = "BuildError";
  }
}

export function cacheRoot() {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(base, "proxyscope", "kube-proxy");
}

export function binaryPath(version) {
  return join(cacheRoot(), version, "kube-proxy");
}

function run(command, opts = {}) {
  const r = spawnSync(command[0], command.slice(1), {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    ...opts,
  });
  if (r.error)
    throw new BuildError(
      command,
      r.error.code === "ENOENT" ? `${command[0]} not found on PATH` : String(r.error),
    );
  if (r.status !== 0) {
    const said = (r.stderr || r.stdout || "").trim().split("\n").slice(-15).join("\n");
    throw new BuildError(command, `exit ${r.status ?? r.signal}: ${said}`);
  }
  return r.stdout;
}

/** True when the cached binary is there and says it is `version`. */
export function cached(version) {
  const bin = binaryPath(version);
  if (!existsSync(bin)) return false;
  const r = spawnSync(bin, ["--version"], { encoding: "utf8" });
  return r.status === 0 && r.stdout.trim() === `Kubernetes ${version}`;
}

/** The build module's go.mod, from k8s.io/kubernetes' own (its go/godebug lines and staging replaces). */
export function buildGoMod(version, kubernetesGoMod) {
  const staging = `v0.${version.slice(3)}`;
  const lines = kubernetesGoMod.split("\n");
  const keep = lines.filter((l) => /^(go|godebug) /.test(l));
  const replaces = [
    ...kubernetesGoMod.matchAll(/^\s*(k8s\.io\/[\w.-]+) => \.\/staging\/src\/k8s\.io\/[\w.-]+\s*$/gm),
  ].map((m) => m[1]);
  if (replaces.length === 0)
    throw new BuildError(
      ["read", "k8s.io/kubernetes go.mod"],
      `no ./staging replace in k8s.io/kubernetes ${version}'s go.mod`,
    );
  return [
    "module proxyscope.test/kube-proxy-build",
    "",
    ...keep,
    "",
    `require k8s.io/kubernetes ${version}`,
    "",
    "replace (",
    ...replaces.map((m) => `\t${m} => ${m} ${STAGING_OVERRIDES[version]?.[m] ?? staging}`),
    ")",
    "",
  ].join("\n");
}

/**
 * The version stamps a release build sets (hack/lib/version.sh kube::version::ldflags): component-base's
 * (--version, kubernetes_build_info) and client-go's (its User-Agent).
 */
function ldflags(version) {
  const [major, minor] = version.slice(1).split(".");
  return [
    "-s -w",
    ...["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"].flatMap((pkg) => [
      `-X ${pkg}.gitVersion=${version}`,
      `-X ${pkg}.gitMajor=${major}`,
      `-X ${pkg}.gitMinor=${minor}`,
      `-X ${pkg}.gitTreeState=clean`,
    ]),
  ].join(" ");
}

export function build(version) {
  if (!/^v1\.\d+\.\d+$/.test(version))
    throw new BuildError(["build", version], "not a release version like v1.34.4");
  const bin = binaryPath(version);
  if (cached(version)) return bin;
  const dir = join(cacheRoot(), version);
  const work = join(dir, "module");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  // GOTOOLCHAIN=auto: an older go fetches the release's toolchain (module golang.org/toolchain) itself.
  const env = {
    ...process.env,
    GOTOOLCHAIN: process.env.PROXYSCOPE_GOTOOLCHAIN || "auto",
    CGO_ENABLED: "0",
    GOFLAGS: "-mod=mod",
  };
  const tmp = `${bin}.partial`;
  // Nothing half-made stays: the build module and a partial binary go, whatever happened.
  try {
    run(["go", "version"], { env });
    const info = JSON.parse(
      run(["go", "mod", "download", "-json", `k8s.io/kubernetes@${version}`], { cwd: work, env }),
    );
    writeFileSync(join(work, "go.mod"), buildGoMod(version, readFileSync(info.GoMod, "utf8")));
    run(
      [
        "go",
        "build",
        "-trimpath",
        "-o",
        tmp,
        "-ldflags",
        ldflags(version),
        "k8s.io/kubernetes/cmd/kube-proxy",
      ],
      {
        cwd: work,
        env,
      },
    );
    renameSync(tmp, bin);
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(tmp, { force: true });
  }
  if (!cached(version))
    throw new BuildError([bin, "--version"], `the built binary does not say Kubernetes ${version}`);
  return bin;
}

async function main(argv) {
  if (argv[0] === "--path") {
    for (const v of argv.slice(1)) process.stdout.write(`${binaryPath(v)}\n`);
    return 0;
  }
  for (const v of argv.length > 0 ? argv : VERSIONS) {
    const was = cached(v);
    const started = Date.now();
    try {
      const bin = build(v);
      process.stderr.write(
        was
          ? `kube-proxy ${v}: cached at ${bin}\n`
          : `kube-proxy ${v}: built ${bin} in ${Math.round((Date.now() - started) / 1000)}s\n`,
      );
    } catch (e) {
      process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
      return 1;
    }
  }
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = await main(process.argv.slice(2));
