// The image's build steps without a Docker engine: scripts/build-image-app.sh (what the Dockerfile's build
// stage runs) in a clean copy of the repository's tracked files, filtered by .dockerignore like a build
// context, and the result must run: `schema` prints the JSON Schema, `scan --json` prints a NodeReport.
// It runs npm ci against the npm registry (as a real image build does).
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import t from "tap";
import { ROOT } from "./lib.js";

// The files the tests are about come from the work tree, the rest from git's index.
const UNDER_TEST = ["scripts/build-image-app.sh", "Dockerfile", ".dockerignore"];

function contextFiles(): string[] {
  const r = spawnSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ls-files: ${r.stderr}`);
  const ignored = readFileSync(join(ROOT, ".dockerignore"), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  const isIgnored = (f: string) =>
    ignored.some((p) => (p.startsWith("*.") ? f.endsWith(p.slice(1)) : f === p || f.startsWith(`${p}/`)));
  return [...new Set([...r.stdout.split("\0").filter(Boolean), ...UNDER_TEST])].filter(
    (f) => !isIgnored(f) && existsSync(join(ROOT, f)),
  );
}

const FAKE_COMMIT = "0123456789abcdef0123456789abcdef01234567";

t.test("build-image-app.sh in a clean directory", async (t) => {
  const work = mkdtempSync(join(tmpdir(), "proxyscope-image-"));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  const src = join(work, "src");
  const out = join(work, "out");
  const files = contextFiles();
  t.ok(files.includes("package-lock.json") && files.includes("agent/cli.ts"), "context has the sources");
  t.notOk(
    files.some((f) => f.startsWith("test/") || f.startsWith("node_modules/")),
    ".dockerignore keeps tests out",
  );
  for (const f of files) {
    mkdirSync(dirname(join(src, f)), { recursive: true });
    copyFileSync(join(ROOT, f), join(src, f));
  }

  const build = spawnSync("sh", ["scripts/build-image-app.sh", out], {
    cwd: src,
    encoding: "utf8",
    timeout: 540_000,
    // The Dockerfile passes its REVISION build argument the same way: the context has no .git.
    env: { ...process.env, npm_config_update_notifier: "false", PROXYSCOPE_REVISION: FAKE_COMMIT },
  });
  t.equal(
    build.status,
    0,
    `build-image-app.sh failed:\n${build.stdout.slice(-3000)}\n${build.stderr.slice(-3000)}`,
  );
  if (build.status !== 0) return;

  const cli = join(out, "dist/agent/cli.js");
  t.ok(existsSync(cli), "dist/agent/cli.js");
  const revision = spawnSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `process.stdout.write((await import(${JSON.stringify(join(out, "dist/common/version.js"))})).REVISION)`,
    ],
    { cwd: work, encoding: "utf8", timeout: 60_000 },
  );
  t.equal(
    revision.stdout,
    FAKE_COMMIT,
    `build_info's revision is the one the build was given: ${revision.stderr}`,
  );
  t.equal(statSync(cli).mode & 0o111, 0o111, "cli.js executable (the image links it onto PATH)");
  // The native helper the agent's scan cache rests on ships beside the agent and answers.
  const helper = join(out, "dist/agent/native/proxyscope-nft-generation");
  t.ok(
    existsSync(helper) && (statSync(helper).mode & 0o111) === 0o111,
    "the native helper ships, executable",
  );
  const gen = spawnSync(helper, [], { encoding: "utf8", timeout: 30_000 });
  t.match(gen.stdout, /^\d+\n$/, `it prints the nf_tables generation: ${gen.stderr}`);
  t.same(
    readdirSync(join(out, "dist")).filter((d) => !["agent", "collector", "common"].includes(d)),
    [],
    "only the two programs and what both import",
  );
  t.equal(
    readFileSync(join(out, "LICENSE"), "utf8"),
    readFileSync(join(ROOT, "LICENSE"), "utf8"),
    "the licence ships with the app",
  );
  t.notOk(existsSync(join(out, "node_modules/typescript")), "no dev dependency (typescript)");
  t.notOk(existsSync(join(out, "node_modules/tap")), "no dev dependency (tap)");
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  for (const d of Object.keys(pkg.dependencies))
    t.ok(existsSync(join(out, "node_modules", d)), `production dependency ${d}`);

  // Run from somewhere else, so nothing resolves from the repository's own node_modules.
  const schema = spawnSync(process.execPath, [cli, "schema"], {
    cwd: work,
    encoding: "utf8",
    timeout: 60_000,
  });
  t.equal(schema.status, 0, schema.stderr);
  const version = spawnSync(process.execPath, [cli, "--version"], {
    cwd: work,
    encoding: "utf8",
    timeout: 60_000,
  });
  t.equal(
    version.stdout,
    `proxyscope-agent ${(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version}\n`,
    "--version from the shipped package.json",
  );
  const s = JSON.parse(schema.stdout) as { type?: string; properties?: Record<string, unknown> };
  t.ok(s.properties && "phase" in s.properties && "findings" in s.properties, "NodeReport JSON Schema");

  const scan = spawnSync(
    process.execPath,
    [
      cli,
      "scan",
      "--json",
      "--node",
      "image-test",
      "--host-root",
      join(ROOT, "test/fixtures/host"),
      // Nothing listens here: kube-proxy probes fail fast and are reported, not fatal.
      "--kube-proxy-metrics-url",
      "http://127.0.0.1:1",
      "--kube-proxy-health-url",
      "http://127.0.0.1:1",
    ],
    { cwd: work, encoding: "utf8", timeout: 120_000 },
  );
  t.ok(scan.status === 0 || scan.status === 1, `scan exit ${scan.status}: ${scan.stderr}`);
  const report = JSON.parse(scan.stdout) as {
    node: string;
    phase: string;
    probes: unknown;
    schemaVersion: unknown;
  };
  t.equal(report.node, "image-test");
  t.ok(typeof report.phase === "string" && report.schemaVersion !== undefined && report.probes !== undefined);
});
