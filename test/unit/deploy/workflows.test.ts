// The GitHub Actions workflows: each passes action-validator (mpalmer/action-validator, the SchemaStore
// workflow schema plus its own checks, here as its published WebAssembly build), and the release workflow
// does what a release promises: a multi-arch image pushed to ghcr.io, signed keyless, with an SBOM and
// provenance, the manifests pinned to it. Its version check is run for real, as bash runs it.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validateWorkflow } from "@action-validator/core";
import t from "tap";
import { parse } from "yaml";
import { ROOT } from "./lib.js";

const DIR = join(ROOT, ".github/workflows");
const files = readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f));
const text = (f: string) => readFileSync(join(DIR, f), "utf8");

type Step = { id?: string; name?: string; uses?: string; run?: string; with?: Record<string, unknown> };
type Job = {
  permissions?: Record<string, string>;
  steps: Step[];
  needs?: string | string[];
  strategy?: { matrix?: { include?: { target: string; runner: string }[] } };
};
type Workflow = {
  on: Record<string, unknown>;
  permissions?: Record<string, string>;
  jobs: Record<string, Job>;
};
const wf = (f: string) => parse(text(f)) as Workflow;

t.test("every workflow passes action-validator", async (t) => {
  t.same(files.sort(), ["ci.yml", "release.yml"]);
  for (const f of files) t.same(validateWorkflow(text(f)).errors, [], f);
});

t.test("the validator bites: a misspelt key and a job without runs-on fail", async (t) => {
  // `with:` is free-form for an action, so the typo goes where the schema is closed: the step itself.
  const badStep = text("release.yml").replace(
    "      - uses: sigstore/cosign-installer@v3",
    "      - usse: sigstore/cosign-installer@v3",
  );
  t.not(badStep, text("release.yml"));
  t.not(validateWorkflow(badStep).errors.length, 0, "unknown step key");
  const noRunsOn = text("ci.yml").replace(
    "    runs-on: ubuntu-24.04\n    timeout-minutes: 60\n    container:",
    "    timeout-minutes: 60\n    container:",
  );
  t.not(noRunsOn, text("ci.yml"));
  t.not(validateWorkflow(noRunsOn).errors.length, 0, "job without runs-on");
});

t.test("ci runs .ci/run in a privileged Debian container", async (t) => {
  const ci = wf("ci.yml");
  t.same(ci.permissions, { contents: "read" }, "read-only token");
  const test = ci.jobs.test as Job & { container: { image: string; options: string } };
  t.match(test.container.image, /^debian:bookworm/);
  t.match(test.container.options, /--privileged/, "network namespaces and UML need it");
  t.ok(test.steps.some((s) => s.run?.trim() === ".ci/run"));
  const load = ci.jobs["test-under-load"] as Job & { container: { image: string; options: string } };
  t.ok(load, "and once more under two CPU hogs");
  t.match(load.container.options, /--privileged/);
  t.ok(load.steps.some((s) => s.run?.includes("scripts/test-under-load.sh")));
});

t.test("release: multi-arch, pushed, signed, SBOM and provenance, least privilege", async (t) => {
  const r = wf("release.yml");
  t.same(r.on, { push: { tags: ["v*"] } }, "on version tags only");
  t.same(r.permissions, { contents: "read" }, "read-only by default");
  const image = r.jobs.image!;
  t.same(image.permissions, { contents: "read", packages: "write", "id-token": "write" });
  const build = image.steps.find((s) => s.uses?.startsWith("docker/build-push-action@"))!;
  t.equal(build.with?.platforms, "linux/amd64,linux/arm64");
  t.equal(build.with?.push, true);
  t.equal(build.with?.sbom, true, "BuildKit SBOM attestation");
  t.match(String(build.with?.provenance), /^mode=max$/, "SLSA provenance");
  t.ok(
    image.steps.some((s) => s.uses?.startsWith("docker/setup-qemu-action@")),
    "QEMU for arm64",
  );
  const login = image.steps.find((s) => s.uses?.startsWith("docker/login-action@"))!;
  t.equal(login.with?.registry, "ghcr.io");
  const runs = image.steps.map((s) => s.run ?? "").join("\n");
  t.match(runs, /cosign sign --yes "\$IMAGE"/, "signed keyless (OIDC: id-token write)");
  t.match(runs, /cosign attest --yes --type spdxjson/, "SBOM attested to the image");
  t.ok(image.steps.some((s) => s.uses?.startsWith("anchore/sbom-action@")));
  for (const [name, job] of Object.entries(r.jobs))
    if (name !== "image") t.notOk(job.permissions?.["id-token"], `${name} cannot sign`);
  const publish = r.jobs.publish!;
  t.same(publish.permissions, { contents: "write" }, "only the job making the GitHub release writes");
  const pin = publish.steps.map((s) => s.run ?? "").join("\n");
  t.match(pin, /kustomize edit set image "proxyscope=\$\{IMAGE\}:\$\{VERSION\}@\$\{DIGEST\}"/);
  const node = r.jobs.check!.steps.find((s) => s.uses?.startsWith("actions/setup-node@"))!;
  t.equal(node.with?.["node-version-file"], ".node-version", "CI's Node is the pinned one");
});

t.test("release: the version check passes for this checkout's version and refuses another", async (t) => {
  const step = wf("release.yml").jobs.check!.steps.find((s) => s.id === "version")!;
  const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string })
    .version;
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-release-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const run = (ref: string) =>
    spawnSync("bash", ["-eo", "pipefail", "-c", step.run!], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
      env: { PATH: process.env.PATH, GITHUB_REF_NAME: ref, GITHUB_OUTPUT: join(dir, `out-${ref}`) },
    });
  const ok = run(`v${version}`);
  t.equal(ok.status, 0, ok.stderr);
  t.equal(readFileSync(join(dir, `out-v${version}`), "utf8"), `version=${version}\n`);
  const bad = run("v99.0.0");
  t.equal(bad.status, 1);
  t.match(bad.stderr, /set all three to one version/);
});

// CI cannot push, so what a tag builds is checked here: every artifact comes from the script or command
// a test of this repository runs, with the same arguments.
t.test("release: every artifact is built by the script its test exercises", async (t) => {
  const r = wf("release.yml");
  const runs = (job: string) => (r.jobs[job]?.steps ?? []).map((s) => s.run ?? "").join("\n");
  const sea = runs("sea");
  t.match(
    sea,
    /^node scripts\/build-sea\.mjs linux-x64 linux-arm64$/m,
    "both executables (sea.test.ts, krew.test.ts)",
  );
  t.match(
    sea,
    /^node scripts\/sea-archive\.mjs linux-x64 linux-arm64 darwin-x64 darwin-arm64$/m,
    "packed for krew (krew.test.ts)",
  );
  t.match(sea, /node scripts\/krew-manifest\.mjs/, "krew's manifest (krew.test.ts)");
  for (const os of ["linux", "darwin"])
    for (const arch of ["amd64", "arm64"])
      t.match(
        sea,
        new RegExp(`--archive "dist/release/kubectl-proxyscope_v\\$\\{VERSION\\}_${os}_${arch}\\.tar\\.gz"`),
      );
  // macOS: built, signed and run on a Mac of each architecture; packed with the Linux ones.
  const mac = r.jobs["sea-darwin"]!;
  const macRuns = runs("sea-darwin");
  t.match(
    macRuns,
    /^node scripts\/build-sea\.mjs \$\{\{ matrix\.target \}\}$/m,
    "build-sea.mjs signs on the Mac",
  );
  t.match(macRuns, /env -i "\$EXE" --version/, "runs with no Node.js inherited");
  t.match(macRuns, /env -i "\$EXE" report --demo -o json/, "renders a report there");
  t.same((mac.strategy?.matrix?.include ?? []).map((m) => m.target).sort(), ["darwin-arm64", "darwin-x64"]);
  t.same([r.jobs.sea!.needs].flat().sort(), ["check", "sea-darwin"], "packing waits for the Mac builds");
  t.match(sea, /--out plugins\/proxyscope\.yaml/);
  t.match(runs("npm"), /^npm pack$/m, "the npm package (npm-pack.test.ts)");
  const chart = runs("chart");
  t.match(chart, /helm="\$\(scripts\/build-go-tool\.sh helm\)"/, "the helm the chart tests build");
  t.match(chart, /"\$helm" package charts\/proxyscope --destination dist\/release/);
  t.match(chart, /node scripts\/sync-chart-files\.mjs --check/, "the chart's copies equal manifests/");
  const build = r.jobs.image!.steps.find((s) => s.uses?.startsWith("docker/build-push-action@"))!;
  t.equal(build.with?.context, ".", "the repository's Dockerfile");
  t.match(String(build.with?.["build-args"]), /NODE_VERSION=\$\{\{ steps\.base\.outputs\.node_version \}\}/);
  t.match(String(build.with?.["build-args"]), /NODE_DIGEST=\$\{\{ steps\.base\.outputs\.node_digest \}\}/);
  t.match(
    String(build.with?.["build-args"]),
    /BOOKWORM_DIGEST=\$\{\{ steps\.bookworm\.outputs\.bookworm_digest \}\}/,
  );
  const publish = r.jobs.publish!;
  t.same(
    [publish.needs].flat().sort(),
    ["chart", "check", "image", "npm", "sea"],
    "publishes only when all are built",
  );
  const upload = runs("publish");
  for (const asset of [
    /assets\/dist\/release\/\*\.tar\.gz/,
    /assets\/dist\/release\/\*\.sha256/,
    /assets\/plugins\/proxyscope\.yaml/,
    /"assets\/chart\/proxyscope-\$\{VERSION\}\.tgz"/,
    /"proxyscope-npm-\$\{VERSION\}\.tgz"/,
  ])
    t.match(upload, asset);
  // Every script a release step runs is run by some test too.
  const tests = readdirSync(join(ROOT, "test"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => readFileSync(join(ROOT, "test", f), "utf8"))
    .join("\n");
  const scripts = new Set(
    Object.keys(r.jobs).flatMap((j) => [...runs(j).matchAll(/scripts\/[\w.-]+/g)].map((m) => m[0])),
  );
  t.ok(scripts.size >= 5, [...scripts].join(" "));
  for (const s of scripts) t.ok(tests.includes(s.slice("scripts/".length)), `${s} is exercised by a test`);
});

t.test("release: the base image step takes .node-version and refuses a missing digest", async (t) => {
  const step = wf("release.yml").jobs.image!.steps.find((s) => s.id === "base")!;
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-base-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const digest = `sha256:${"ab".repeat(32)}`;
  // A stand-in for `docker buildx imagetools inspect`: the shape of its {{json .Manifest}} (an OCI
  // descriptor: mediaType, digest, size), for the reference it was asked about.
  const docker = (answer: string) => {
    writeFileSync(join(dir, "docker"), `#!/bin/sh\necho "$4" >"${dir}/asked"\necho '${answer}'\n`, {
      mode: 0o755,
    });
  };
  const run = () =>
    spawnSync("bash", ["-eo", "pipefail", "-c", step.run!], {
      cwd: ROOT,
      encoding: "utf8",
      env: { PATH: `${dir}:${process.env.PATH}`, GITHUB_OUTPUT: join(dir, "out") },
    });
  docker(JSON.stringify({ mediaType: "application/vnd.oci.image.index.v1+json", digest, size: 10 }));
  const ok = run();
  t.equal(ok.status, 0, ok.stderr);
  const pinned = readFileSync(join(ROOT, ".node-version"), "utf8").trim();
  t.equal(readFileSync(join(dir, "asked"), "utf8"), `node:${pinned}-trixie-slim\n`);
  t.equal(readFileSync(join(dir, "out"), "utf8"), `node_version=${pinned}\nnode_digest=@${digest}\n`);
  docker(JSON.stringify({ mediaType: "application/vnd.oci.image.index.v1+json", size: 10 }));
  const bad = run();
  t.equal(bad.status, 1);
  t.match(bad.stderr, /no digest for node:/);

  // The bookworm stage (kube-proxy's nft witness) is pinned the same way.
  const bookworm = wf("release.yml").jobs.image!.steps.find((s) => s.id === "bookworm")!;
  const runBookworm = () =>
    spawnSync("bash", ["-eo", "pipefail", "-c", bookworm.run!], {
      cwd: ROOT,
      encoding: "utf8",
      env: { PATH: `${dir}:${process.env.PATH}`, GITHUB_OUTPUT: join(dir, "out-bookworm") },
    });
  docker(JSON.stringify({ mediaType: "application/vnd.oci.image.index.v1+json", digest, size: 10 }));
  const pinnedBookworm = runBookworm();
  t.equal(pinnedBookworm.status, 0, pinnedBookworm.stderr);
  t.equal(readFileSync(join(dir, "asked"), "utf8"), "debian:bookworm-slim\n");
  t.equal(readFileSync(join(dir, "out-bookworm"), "utf8"), `bookworm_digest=@${digest}\n`);
  docker(JSON.stringify({ mediaType: "application/vnd.oci.image.index.v1+json", size: 10 }));
  const badBookworm = runBookworm();
  t.equal(badBookworm.status, 1);
  t.match(badBookworm.stderr, /no digest for debian:bookworm-slim/);
});
