// The scan worker's heap bounds (agent/server/scan-thread.ts resourceLimits): a scan that outgrows
// them ends as a failed scan (a ScanThreadError, the serving thread alive), and the next scan runs on
// a fresh worker. The limit here is tiny on purpose; the agent's own is far above a real scan's peak.
import t from "tap";
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCAN_THREAD_LIMITS, ScanThread, ScanThreadError } from "../../../agent/server/scan-thread.js";
import { testWorkerData } from "../../helpers/scan-thread-data.js";

const PROBES = new URL("./scan-thread-hog-probes.ts", import.meta.url).href;

t.test(
  "a scan past the worker's heap limit is a failed scan; the next one runs on a new worker",
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "proxyscope-scan-limits-"));
    process.env.PROXYSCOPE_TEST_SCAN_DIR = dir;
    const thread = new ScanThread(testWorkerData(dir, PROBES), undefined, {
      ...SCAN_THREAD_LIMITS,
      maxOldGenerationSizeMb: 128,
    });
    t.teardown(async () => {
      await thread.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const first = await thread.scan();
    t.equal(
      first.meta.failedProbes.find((p) => p.name === "kernel")?.message,
      "stand-in kernel probe failed",
    );

    writeFileSync(join(dir, "hog"), "");
    const failed = await thread.scan().then(
      (r) => r,
      (e: unknown) => e,
    );
    t.ok(failed instanceof ScanThreadError, `a ScanThreadError, not a report: ${String(failed)}`);
    t.match(String((failed as Error).message), /memory limit|out of memory/i, "says why");

    unlinkSync(join(dir, "hog"));
    const next = await thread.scan();
    t.equal(next.meta.node, "node-a", "the next scan reports");
    t.equal(thread.started, 2, "on a fresh worker");
  },
);

t.test("the agent's own limits: a bounded old generation and a small young one", async (t) => {
  t.ok((SCAN_THREAD_LIMITS.maxOldGenerationSizeMb ?? 0) > 0, "old generation bounded");
  t.ok((SCAN_THREAD_LIMITS.maxYoungGenerationSizeMb ?? 0) > 0, "young generation bounded");
});
