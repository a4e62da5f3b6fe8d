import t from "tap";
import { ScanLoop } from "../../../agent/server/scan-loop.js";
import { renderScan, type RenderedScan } from "../../../agent/server/rendered-scan.js";
import { reportOf } from "../../helpers/reports.js";

/** Resolves once `cond` holds, polling; the test's own timeout bounds it. */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

t.test("scans once at start, never overlaps, counts skipped ticks", async (t) => {
  const report = await renderScan(reportOf({}));
  let running = 0;
  let maxRunning = 0;
  let started = 0;
  const releases: (() => void)[] = [];
  const scanned: RenderedScan[] = [];
  let overruns = 0;
  const loop = new ScanLoop({
    intervalMs: 10,
    scan: async () => {
      started++;
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise<void>((r) => releases.push(r));
      running--;
      return report;
    },
    onScan: (r) => scanned.push(r),
    onOverrun: () => overruns++,
    onError: (e) => t.fail(String(e)),
  });
  loop.start();
  t.equal(started, 1, "the first scan starts at once, not after an interval");
  // The first scan hangs; ticks keep coming and must be skipped, not stacked.
  await until(() => overruns >= 3);
  t.equal(started, 1, "no second scan while the first runs");
  t.ok(loop.scanning);
  releases.shift()!();
  await until(() => started === 2);
  t.equal(scanned.length, 1, "the finished scan was handed over");
  releases.shift()!();
  await until(() => scanned.length === 2);
  await loop.stop(1000);
  t.equal(maxRunning, 1, "never two scans at once");
  const after = started;
  await new Promise((r) => setTimeout(r, 50));
  t.equal(started, after, "no scan after stop");
});

t.test("a scan that throws is reported and the loop goes on", async (t) => {
  const errors: unknown[] = [];
  let n = 0;
  const scanned: RenderedScan[] = [];
  const loop = new ScanLoop({
    intervalMs: 5,
    scan: async () => {
      n++;
      if (n === 1) throw new Error("boom");
      return renderScan(reportOf({}));
    },
    onScan: (r) => scanned.push(r),
    onOverrun: () => {},
    onError: (e) => errors.push(e),
  });
  loop.start();
  await until(() => scanned.length >= 1);
  await loop.stop(1000);
  t.equal(errors.length, 1);
  t.match(String(errors[0]), /boom/);
});

t.test("stop waits a bounded time for a hung scan, and the hung scan's report is dropped", async (t) => {
  const scanned: RenderedScan[] = [];
  const rendered = await renderScan(reportOf({}));
  let release: () => void = () => {};
  const loop = new ScanLoop({
    intervalMs: 60_000,
    scan: () => new Promise<RenderedScan>((r) => (release = () => r(rendered))),
    onScan: (r) => scanned.push(r),
    onOverrun: () => {},
    onError: () => {},
  });
  loop.start();
  await loop.stop(20);
  release();
  await new Promise((r) => setTimeout(r, 10));
  t.equal(scanned.length, 0);
});
