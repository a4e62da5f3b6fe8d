import t, { type Test } from "tap";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { buildApp } from "../../../agent/server/app.js";
import { ScanLoop } from "../../../agent/server/scan-loop.js";
import type { RenderedScan } from "../../../agent/server/rendered-scan.js";
import { ScanThread, ScanThreadError, type FromWorker } from "../../../agent/server/scan-thread.js";
import { AgentState } from "../../../agent/server/state.js";
import { NodeReport } from "../../../agent/report/schema.js";
import { fleetDigestOf } from "../../../agent/view/fleet-digest.js";
import { processesWith, untilNoneWith } from "../../helpers/procs.js";
import { testWorkerData } from "../../helpers/scan-thread-data.js";

const PROBES = new URL("./scan-thread-probes.ts", import.meta.url).href;

const WORKER = new URL("../../../agent/server/scan-worker.js", import.meta.url);

const workerData = (dir: string) => testWorkerData(dir, PROBES);

function setup(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-scan-thread-"));
  process.env.PROXYSCOPE_TEST_SCAN_DIR = dir;
  const thread = new ScanThread(workerData(dir));
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

const reportOf = (r: RenderedScan) => JSON.parse(Buffer.from(r.report).toString("utf8")) as NodeReport;

t.test("a scan on the scan thread: a report, a failing probe named in it", async (t) => {
  const { thread } = setup(t);
  const r = reportOf(await thread.scan());
  t.equal(r.node, "node-a");
  const kernel = r.probes.find((p) => p.name === "kernel");
  t.equal(kernel?.ok, false);
  t.equal(kernel?.error?.message, "stand-in kernel probe failed");
  const again = await thread.scan();
  t.equal(reportOf(again).node, "node-a");
  t.same(again.meta.failedProbes, [
    { name: "kernel", kind: "exec-failed", command: undefined, message: "stand-in kernel probe failed" },
  ]);
  t.equal(thread.started, 1, "one thread serves every scan");
  const v = await thread.verify();
  t.equal(v.node, "node-a", "/verify checks the thread's own last report");
});

t.test("a scan that leaves a large read's garbage: the thread gives it back and says so", async (t) => {
  const { thread, file } = setup(t);
  const releases: number[] = [];
  let released = () => {};
  thread.onHeapRelease = (b) => {
    releases.push(b);
    released();
  };
  await thread.scan();
  file("garbage");
  const next = new Promise<void>((r) => (released = r));
  await thread.scan();
  // The port keeps order: a release after the small scan would have arrived before this report.
  t.equal(releases.length, 0, "a small scan released nothing");
  await next;
  t.equal(releases.length, 1, "the large one released once");
  const bytes = releases[0]!;
  t.ok(bytes > 24 * 1048576, `the release gave back ${Math.round(bytes / 1048576)} MB of V8 heap`);
  const metrics = new AgentMetrics({ version: "test" });
  metrics.recordHeapRelease(bytes);
  const text = await metrics.exposition();
  t.match(text, /^proxyscope_scan_heap_releases_total 1$/m);
  t.match(text, new RegExp(`^proxyscope_scan_heap_released_bytes_total ${bytes}$`, "m"));
});

// The serving thread deserialises what the worker posts: a report object there (the old design) cost
// it hundreds of milliseconds per scan. What it receives is bytes and a few plain fields.
t.test("the scan thread posts finished bytes and a small plain object, never a report", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "proxyscope-scan-thread-"));
  process.env.PROXYSCOPE_TEST_SCAN_DIR = dir;
  const w = new Worker(WORKER, { workerData: workerData(dir) });
  t.teardown(async () => {
    await w.terminate();
    rmSync(dir, { recursive: true, force: true });
  });
  const posted = new Promise<FromWorker>((resolve) =>
    w.on("message", (m: FromWorker) => m.type !== "ready" && resolve(m)),
  );
  w.postMessage({ type: "scan", id: 1 });
  const m = await posted;
  if (m.type !== "report") throw new Error(`expected a report message, got ${JSON.stringify(m)}`);
  t.same(Object.keys(m).sort(), ["id", "scan", "type"]);
  t.same(Object.keys(m.scan).sort(), ["fleet", "meta", "metrics", "parity", "report", "summary"]);
  for (const k of ["report", "summary", "fleet", "metrics"] as const)
    t.type(m.scan[k], Uint8Array, `${k} is bytes`);
  t.ok(
    m.scan.parity.ok ? m.scan.parity.json instanceof Uint8Array : typeof m.scan.parity.message === "string",
  );
  // Everything but the bodies: the scan log's fields, bounded by probe count, not by the node's size.
  t.ok(JSON.stringify(m.scan.meta).length < 2048, "meta is small");
  t.notOk("facts" in m.scan.meta, "no facts");
  t.type(m.scan.meta.findings, "number", "a finding count, not the findings");
  const report = JSON.parse(Buffer.from(m.scan.report).toString("utf8")) as NodeReport;
  t.equal(report.node, "node-a", "the report is the bytes");
  t.same(
    JSON.parse(Buffer.from(m.scan.fleet).toString("utf8")),
    JSON.parse(JSON.stringify(fleetDigestOf(NodeReport.parse(report)))),
    "/report/fleet's bytes: the digest of that report, made on the scan thread",
  );
  t.match(Buffer.from(m.scan.metrics).toString("utf8"), /^proxyscope_probe_success\{probe="kernel"\} 0$/m);
});

t.test("/report and /metrics answer while the scan thread is busy and never yields", async (t) => {
  const { dir, thread, file } = setup(t);
  const state = new AgentState(new AgentMetrics({ version: "0.1.0" }));
  const first = await thread.scan();
  state.record(first);
  const app = buildApp(state, {
    retryAfterS: 60,
    lookupVirtualServer: async () => ({ status: "not-found" }),
  });
  t.teardown(() => app.close());
  file("hold");
  let done = false;
  const scan = thread.scan().then((r) => ((done = true), r));
  await until(() => existsSync(join(dir, "holding")));
  // The scan is now spinning; these are answered by this thread meanwhile, or not at all.
  const report = await app.inject("/report");
  const metrics = await app.inject("/metrics");
  t.equal(report.statusCode, 200);
  t.equal(JSON.parse(report.body).node, "node-a", "the last good report");
  t.same(report.rawPayload, Buffer.from(first.report), "/report sends the scan thread's bytes as they are");
  t.match(metrics.body, /proxyscope_scans_total 1/);
  t.equal(done, false, "answered while the scan was still running");
  file("release");
  t.equal(reportOf(await scan).node, "node-a");
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
      scan: () => thread.scan(),
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
    t.equal(state.current!.meta.node, "node-a", "a fresh thread scans again");
    t.equal((await thread.verify()).node, "node-a", "the fresh thread has the last good report to verify");
    await loop.stop(1000);
    t.ok(thread.started >= 2);

    file("exit");
    await t.rejects(thread.scan(), /scan thread exited \(code 7\)/);
    rmSync(join(dir, "exit"));
    t.equal(reportOf(await thread.scan()).node, "node-a");
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
      const scan = thread.scan();
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
