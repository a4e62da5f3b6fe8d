// Stand-in probes for the scan thread's tests (test/unit/server/scan-thread.test.ts), loaded inside
// the worker. What each scan does is steered by files in PROXYSCOPE_TEST_SCAN_DIR, which the test
// writes: the worker shares the file system, not the test's variables.
import { existsSync, writeFileSync } from "node:fs";
import { defineProbe } from "../../../agent/probes/types.js";

const dir = process.env.PROXYSCOPE_TEST_SCAN_DIR ?? "/nonexistent";
const at = (f: string) => existsSync(`${dir}/${f}`);
// Only a fail-safe so that a regression (a scan on the serving thread) ends instead of hanging the
// suite; no assertion depends on it.
const FAILSAFE_MS = 120_000;

export const PROBES = [
  defineProbe("kernel", {
    async run() {
      if (at("crash")) {
        // An error nothing catches, as a bug deep in a parser would throw it: the thread dies.
        setImmediate(() => {
          throw new Error("stand-in parser bug");
        });
        await new Promise(() => {});
      }
      if (at("exit")) process.exit(7);
      if (at("hold")) {
        // Synchronous work that never yields, as parsing a 20 MB listing does: on the serving thread
        // no request could be answered until it ends.
        writeFileSync(`${dir}/holding`, "");
        const started = Date.now();
        while (!at("release") && Date.now() - started < FAILSAFE_MS);
      }
      return { ok: false, error: { kind: "exec-failed", message: "stand-in kernel probe failed" } };
    },
  }),
];
