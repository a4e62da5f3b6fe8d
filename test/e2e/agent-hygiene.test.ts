// The built agent leaves no process behind, whatever its tools do. Every tool in the list is a real
// hanging wrapper (test/helpers/hanging-tools.ts); the processes are counted from /proc by the tool
// directory's marker. `scan` must exit at all (tap's timeout is the only clock, far past the deadlines
// plus the kill grace) with nothing left; `serve` must not gain processes scan after scan.
import t from "tap";
import { TOOLS } from "../../agent/io/tools.js";
import { staleBuild } from "../helpers/built.js";
import { spawnOwned } from "../helpers/children.js";
import { HANG_KINDS, hangingToolDir, type HangKind } from "../helpers/hanging-tools.js";
import { processesWith, untilNoneWith } from "../helpers/procs.js";
import { AGENT_CLI } from "../helpers/standin.js";
import { startAgent } from "./agent-process.js";

t.equal(staleBuild(["agent/cli.ts", "agent/io/run.ts", "agent/scan.ts"]), null, "dist/ is built and current");

// Nothing answers on port 9 of loopback: kube-proxy's probes fail at once, as on a node without it.
const NOWHERE = "http://127.0.0.1:9";
const DEADLINES = ["--call-timeout-ms", "1000", "--probe-timeout-ms", "2000"];

for (const kind of Object.keys(HANG_KINDS) as HangKind[]) {
  t.test(`scan with every tool ${kind}: exits, prints a report, leaves nothing`, async (t) => {
    const tools = hangingToolDir(kind);
    t.teardown(tools.remove);
    t.same(processesWith(tools.marker), [], "none before");
    const child = spawnOwned(
      process.execPath,
      [
        AGENT_CLI,
        "scan",
        "--json",
        "--node",
        "hygiene",
        "--tool-dir",
        tools.dir,
        "--kube-proxy-metrics-url",
        NOWHERE,
        "--kube-proxy-health-url",
        NOWHERE,
        ...DEADLINES,
      ],
      { stdio: ["ignore", "pipe", "pipe"], owner: t },
    );
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    // No deadline of ours: a scan that never exits fails by tap's timeout, which names this test.
    const code = await new Promise<number | null>((r) => child.once("close", (c) => r(c)));
    t.not(code, null, `scan exited by itself: ${stderr}`);
    t.ok(code === 0 || code === 1, `exit code ${code} is a report's, not a crash's: ${stderr}`);
    const report = JSON.parse(stdout) as { probes?: Record<string, { ok: boolean }> };
    t.ok(report.probes && Object.keys(report.probes).length > 0, "a report with its probes");
    t.same(await untilNoneWith(tools.marker), [], "no tool process left after scan exited");
  });
}

t.test("serve: scan after scan with hanging tools, the process count does not grow", async (t) => {
  const tools = hangingToolDir("ignores-term");
  t.teardown(tools.remove);
  const agent = await startAgent({
    args: [
      "--tool-dir",
      tools.dir,
      "--scan-interval-s",
      "1",
      "--kube-proxy-metrics-url",
      NOWHERE,
      "--kube-proxy-health-url",
      NOWHERE,
      ...DEADLINES,
    ],
  });
  t.teardown(() => agent.stop());
  // At most one scan runs at a time (a tick during a scan is skipped), so at any moment at most every
  // tool of one scan is running: its wrapper and its sleep. Before the whole process group was killed, each scan left one more.
  const perScan = 2 * Object.keys(TOOLS).length;
  const counts: number[] = [];
  for (let n = 1; n <= 6; n++) {
    await agent.scans(n);
    counts.push(processesWith(tools.marker).length);
  }
  t.ok(
    counts.every((c) => c <= perScan),
    `after each of 6 scans at most one scan's tools (${perScan}) are running: ${counts.join(", ")}`,
  );
  t.equal(await agent.stop(), 0, "the agent stops on SIGTERM");
  t.same(await untilNoneWith(tools.marker), [], "nothing left after the agent stopped");
});
