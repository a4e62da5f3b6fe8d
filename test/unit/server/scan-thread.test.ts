import t, { type Test } from "tap";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { buildApp } from "../../../agent/server/app.js";
import { ScanLoop } from "../../../agent/server/scan-loop.js";
import { ScanThread, ScanThreadError } from "../../../agent/server/scan-thread.js";
import { AgentState } from "../../../agent/server/state.js";
import { processesWith, untilNoneWith } from "../../helpers/procs.js";

const PROBES = new URL("./scan-thread-probes.ts", import.meta.url).href;

function setup(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-scan-thread-"));
  process.env.PROXYSCOPE_TEST_SCAN_DIR = dir;
  const thread = new ScanThread({
    toolDirs: [dir],
    probesModule: PROBES,
    input: {
      node: "node-a",
      agentVersion: "0.1.0",
      hostRoot: "/",
      procRoot: "/proc",
      sysRoot: "/sys",
      kubeProxyMetricsUrl: "http://127.0.0.1:1",
      kubeProxyHealthUrl: "http://127.0.0.1:1",
      nodeIPs: [],
      callTimeoutMs: 10_000,
      probeTimeoutMs: 200_000,
    },
  });
  t.teardown(async () => {
    writeFileSync(join(dir, "release"), "");
    await thread.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, thread, file: (f: string) => writeFileSync(join(dir, f), "") };
}

const until = async (cond: () => boolean) => {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
};

t.test("a scan on the scan thread: a report, a failing probe named in it", async (t) => {
  const { thread } = setup(t);
  const r = await thread.scan(null);
  t.equal(r.node, "node-a");
  const kernel = r.probes.find((p) => p.name === "kernel");
  t.equal(kernel?.ok, false);
  t.equal(kernel?.error?.message, "stand-in kernel probe failed");
  const again = await thread.scan(r);
  t.equal(again.node, "node-a");
  t.equal(thread.started, 1, "one thread serves every scan");
});

t.test("/report and /metrics answer while the scan thread is busy and never yields", async (t) => {
  const { dir, thread, file } = setup(t);
  const state = new AgentState(new AgentMetrics({ version: "0.1.0" }));
  state.record(await thread.scan(null));
  const app = buildApp(state, {
    retryAfterS: 60,
    lookupVirtualServer: async () => ({ status: "not-found" }),
  });
  t.teardown(() => app.close());
  file("hold");
  let done = false;
  const scan = thread.scan(state.current!.report).then((r) => ((done = true), r));
  await until(() => existsSync(join(dir, "holding")));
  // The scan is now spinning; these are answered by this thread meanwhile, or not at all.
  const report = await app.inject("/report");
  const metrics = await app.inject("/metrics");
  t.equal(report.statusCode, 200);
  t.equal(JSON.parse(report.body).node, "node-a", "the last good report");
  t.match(metrics.body, /proxyscope_scans_total 1/);
  t.equal(done, false, "answered while the scan was still running");
  file("release");
  t.equal((await scan).node, "node-a");
});

t.test(
  "a scan thread that crashes or exits fails that scan by name; the next scan gets a new thread",
  async (t) => {
    const { dir, thread, file } = setup(t);
    const state = new AgentState(new AgentMetrics({ version: "0.1.0" }));
    const errors: unknown[] = [];
    // What serve.ts wires: a failed scan is counted and logged, and only a report replaces the last one.
    const loop = new ScanLoop({
      intervalMs: 50,
      scan: () => thread.scan(state.current?.report ?? null),
      onScan: (r) => state.record(r),
      onOverrun: () => {},
      onError: (e) => {
        errors.push(e);
        state.metrics.recordScanFailure();
      },
    });
    t.teardown(() => loop.stop(1000));
    loop.start();
    await until(() => state.current !== null);
    const good = state.current!;
    file("crash");
    await until(() => errors.length >= 1);
    t.type(errors[0], ScanThreadError);
    t.match(String(errors[0]), /scan thread crashed: stand-in parser bug/);
    t.equal(state.current, good, "the last good report is still the one served");
    t.match(await state.metrics.exposition(), /proxyscope_scan_failures_total [1-9]/);
    rmSync(join(dir, "crash"));
    await until(() => state.current !== good);
    t.equal(state.current!.report.node, "node-a", "a fresh thread scans again");
    await loop.stop(1000);
    t.ok(thread.started >= 2);

    file("exit");
    await t.rejects(thread.scan(good.report), /scan thread exited \(code 7\)/);
    rmSync(join(dir, "exit"));
    t.equal((await thread.scan(good.report)).node, "node-a");
  },
);

// A tool that never ends on its own, found by its path (which holds the test's own directory): a
// shell that says it started, then loops, so it is alive until something kills its process group.
function fakeNft(dir: string): void {
  const path = join(dir, "nft");
  writeFileSync(path, `#!/bin/sh\n: > "${dir}/tool-started"\nwhile :; do /bin/sleep 1; done\n`);
  chmodSync(path, 0o755);
}

for (const how of ["crash", "hang"] as const) {
  t.test(
    `a scan thread that ${how === "crash" ? "crashes" : "is terminated"} mid-call leaves no tool process behind`,
    async (t) => {
      const { dir, thread, file } = setup(t);
      fakeNft(dir);
      file(`orphan-${how}`);
      const scan = thread.scan(null);
      await until(() => existsSync(join(dir, "tool-started")));
      t.ok(processesWith(dir).length > 0, "the fake tool runs");
      file("go");
      if (how === "crash") {
        await t.rejects(scan, /scan thread crashed: stand-in crash mid-call/);
      } else {
        // The thread never reads the close message: close() has to terminate it.
        await until(() => existsSync(join(dir, "spinning")));
        await thread.close(100);
        await t.rejects(scan, /scan thread exited/);
      }
      t.same(await untilNoneWith(dir), [], "every process the thread started is gone");
    },
  );
}
