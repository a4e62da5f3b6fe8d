// The exit-code table, end to end through the built CLIs: each kind of ending has its own code, so a
// script can tell bad flags from an unreadable cluster from a bug.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { EXIT } from "../../../common/exit-codes.js";
import { VERSION } from "../../../common/version.js";
import { staleBuild } from "../../helpers/built.js";
import { REPO_ROOT } from "../../helpers/uml.js";

const COLLECTOR = join(REPO_ROOT, "dist/collector/cli.js");
const AGENT = join(REPO_ROOT, "dist/agent/cli.js");
// Fault injection for "internal error": a preloaded module makes JSON.stringify throw, so `schema`
// fails inside the command the way a bug would. Nothing in the programs knows about it.
const BREAK_JSON = "data:text/javascript,JSON.stringify=()=>{throw new Error('injected fault')}";

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cli: string, args: string[], nodeArgs: string[] = []): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...nodeArgs, cli, ...args],
      // Without tap's NODE_OPTIONS: its loaders are not the programs', and would see the injected fault too.
      { timeout: 120_000, env: { ...process.env, NODE_OPTIONS: "", KUBECONFIG: "/nonexistent/kubeconfig" } },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

t.test("the table: 0 and 1 as they were, then one code per kind of failure", async (t) => {
  t.equal(EXIT.ok, 0);
  t.equal(EXIT.findings, 1);
  t.equal(EXIT.usage, 2);
  const codes = Object.values(EXIT);
  t.equal(new Set(codes).size, codes.length, "no two meanings share a code");
  for (const c of codes) t.ok(Number.isInteger(c) && c >= 0 && c < 126, `${c} is an ordinary exit status`);
});

t.test("the built collector", async (t) => {
  t.equal(
    staleBuild(["collector/cli.ts", "common/exit-codes.ts", "common/version.ts"]),
    null,
    "dist is current",
  );

  const usage = await run(COLLECTOR, ["report", "--fail-on", "purple"]);
  t.equal(usage.code, EXIT.usage, usage.stderr);
  t.match(usage.stderr, /invalid --fail-on/);
  const unknown = await run(COLLECTOR, ["frobnicate"]);
  t.equal(unknown.code, EXIT.usage, "an unknown command is a usage error");
  const none = await run(COLLECTOR, []);
  t.equal(none.code, EXIT.usage, "no command is a usage error");

  const noReport = await run(COLLECTOR, ["report", "--kubeconfig", "/nonexistent/kubeconfig"]);
  t.equal(noReport.code, EXIT.noReport, noReport.stderr);
  t.match(noReport.stderr, /no report/);
  t.equal(noReport.stdout, "", "nothing that could pass for a report");
  t.notMatch(noReport.stderr, /internal error/);

  const crash = await run(COLLECTOR, ["schema"], ["--import", BREAK_JSON]);
  t.equal(crash.code, EXIT.internalError, crash.stderr);
  t.match(crash.stderr, /^proxyscope: internal error: Error: /);
  t.match(crash.stderr, /injected fault/, "the fault that was injected, not another");

  const v = await run(COLLECTOR, ["--version"]);
  t.equal(v.code, EXIT.ok);
  t.equal(v.stdout, `proxyscope ${VERSION}\n`);
});

t.test("the built agent", async (t) => {
  t.equal(staleBuild(["agent/cli.ts", "common/exit-codes.ts", "common/version.ts"]), null, "dist is current");

  const usage = await run(AGENT, ["scan", "--no-such-flag"]);
  t.equal(usage.code, EXIT.usage, usage.stderr);
  const unknown = await run(AGENT, ["frobnicate"]);
  t.equal(unknown.code, EXIT.usage);

  const crash = await run(AGENT, ["schema"], ["--import", BREAK_JSON]);
  t.equal(crash.code, EXIT.internalError, crash.stderr);
  t.match(crash.stderr, /^proxyscope-agent: internal error: Error: /);
  t.match(crash.stderr, /injected fault/, "the fault that was injected, not another");

  const v = await run(AGENT, ["--version"]);
  t.equal(v.code, EXIT.ok);
  t.equal(v.stdout, `proxyscope-agent ${VERSION}\n`);
});

t.test("the version is package.json's, one source for both programs", async (t) => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
  t.equal(VERSION, pkg.version, "read from the source tree");
  const [a, c] = await Promise.all([run(AGENT, ["version"]), run(COLLECTOR, ["version"])]);
  t.equal(a.stdout.split(" ")[1], `${pkg.version}\n`, "the built agent");
  t.equal(c.stdout.split(" ")[1], `${pkg.version}\n`, "the built collector");
});
