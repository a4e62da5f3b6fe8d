#!/usr/bin/env node
// Writes krew's Plugin manifest for a release (what kubernetes-sigs/krew-index holds as plugins/proxyscope.yaml):
//   node scripts/krew-manifest.mjs --base-url URL --archive dist/release/kubectl-proxyscope_vX_linux_amd64.tar.gz ...
//   node scripts/krew-manifest.mjs --asset darwin/arm64=URL#SHA256 ...      (an asset built elsewhere)
//   [--version vX.Y.Z] (default v + package.json's)  [--out FILE] (default plugins/proxyscope.yaml)
// An --archive is hashed here and its os/arch read from its name (scripts/sea-archive.mjs names it);
// its URL is --base-url/NAME, the release's download address. Only linux amd64/arm64 are built in this
// repository (scripts/build-sea.mjs): a darwin executable must be code-signed after injection, which
// needs a macOS machine, so darwin platforms appear only when their assets are given with --asset.
// Format: krew's docs, "Writing Krew plugin manifests" (apiVersion krew.googlecontainertools.github.com/v1alpha2).
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const OSES = ["linux", "darwin", "windows"];
const ARCHES = ["amd64", "arm64"];
const SHA256 = /^[a-f0-9]{64}$/;

const fail = (why) => {
  process.stderr.write(`krew-manifest: ${why}\n`);
  process.exit(2);
};

const args = process.argv.slice(2);
const opts = { version: `v${pkg.version}`, out: join(ROOT, "plugins/proxyscope.yaml"), baseUrl: null };
const platforms = [];
const archives = [];
for (let i = 0; i < args.length; i++) {
  const flag = args[i];
  const value = args[++i];
  if (value === undefined) fail(`${flag} needs a value`);
  if (flag === "--version") opts.version = value;
  else if (flag === "--out") opts.out = value;
  else if (flag === "--base-url") opts.baseUrl = value.replace(/\/+$/, "");
  else if (flag === "--archive") archives.push(value);
  else if (flag === "--asset") {
    const m = /^([a-z0-9]+)\/([a-z0-9]+)=(.+)#([^#]+)$/.exec(value);
    if (!m) fail(`--asset ${JSON.stringify(value)}: want OS/ARCH=URL#SHA256`);
    platforms.push({ os: m[1], arch: m[2], uri: m[3], sha256: m[4] });
  } else fail(`unknown flag ${JSON.stringify(flag)}`);
}
if (!/^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(opts.version))
  fail(`--version ${JSON.stringify(opts.version)}: krew wants a semantic version with the v prefix`);
for (const file of archives) {
  const m = /^kubectl-proxyscope_(v[^_]+)_([a-z]+)_([a-z0-9]+)\.tar\.gz$/.exec(basename(file));
  if (!m)
    fail(`--archive ${file}: not named kubectl-proxyscope_vVERSION_OS_ARCH.tar.gz (scripts/sea-archive.mjs)`);
  if (m[1] !== opts.version) fail(`--archive ${file} is version ${m[1]}, the manifest ${opts.version}`);
  if (opts.baseUrl === null) fail("--archive needs --base-url, where the release serves it");
  const sha256 = createHash("sha256").update(readFileSync(file)).digest("hex");
  platforms.push({ os: m[2], arch: m[3], uri: `${opts.baseUrl}/${basename(file)}`, sha256 });
}
if (platforms.length === 0) fail("no platform: give --archive or --asset");
const seen = new Set();
for (const p of platforms) {
  if (!OSES.includes(p.os) || !ARCHES.includes(p.arch))
    fail(`${p.os}/${p.arch}: not a platform krew installs this for`);
  if (seen.has(`${p.os}/${p.arch}`)) fail(`${p.os}/${p.arch} given twice`);
  seen.add(`${p.os}/${p.arch}`);
  if (!SHA256.test(p.sha256))
    fail(`${p.os}/${p.arch}: sha256 ${JSON.stringify(p.sha256)} is not 64 lower-case hex digits`);
  if (!/^https:\/\/\S+$/.test(p.uri)) fail(`${p.os}/${p.arch}: uri ${JSON.stringify(p.uri)} is not https`);
}
platforms.sort((a, b) => `${a.os}/${a.arch}`.localeCompare(`${b.os}/${b.arch}`));

const manifest = {
  apiVersion: "krew.googlecontainertools.github.com/v1alpha2",
  kind: "Plugin",
  metadata: { name: "proxyscope" },
  spec: {
    version: opts.version,
    homepage: pkg.homepage,
    shortDescription: "Can each node leave kube-proxy's deprecated ipvs mode?",
    description: [
      "Rolls every node's kube-proxy state (IPVS, ipsets, iptables, nftables, sysctls",
      "and kube-proxy's own /proxyMode) into a fleet readiness report for the move off",
      "the ipvs mode (KEP-5495). `kubectl proxyscope report` reads the agents a",
      "DaemonSet runs; `kubectl proxyscope scan-node NODE` scans one node with one pod.",
      "",
    ].join("\n"),
    caveats: [
      "scan-node creates a privileged pod on the node (as kubectl debug node does):",
      "it needs create/get/watch/delete on pods and get on pods/log in the namespace.",
      "",
    ].join("\n"),
    platforms: platforms.map((p) => ({
      selector: { matchLabels: { os: p.os, arch: p.arch } },
      uri: p.uri,
      sha256: p.sha256,
      files: [
        { from: "kubectl-proxyscope", to: "." },
        { from: "LICENSE", to: "." },
      ],
      bin: "kubectl-proxyscope",
    })),
  },
};
mkdirSync(dirname(opts.out), { recursive: true });
writeFileSync(
  opts.out,
  `# Generated by scripts/krew-manifest.mjs from the release's archives; do not edit by hand.\n${stringify(manifest, { lineWidth: 0 })}`,
);
process.stdout.write(
  `krew-manifest: wrote ${opts.out} (${platforms.map((p) => `${p.os}/${p.arch}`).join(", ")})\n`,
);
