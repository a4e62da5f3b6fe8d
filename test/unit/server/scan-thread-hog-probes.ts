// Stand-in probes for test/unit/server/scan-thread-limits.test.ts, loaded inside the scan worker: with
// the file "hog" in PROXYSCOPE_TEST_SCAN_DIR, the probe keeps allocating (as a parse of a runaway
// listing would) up to a bound far above the test's heap limit; without it, it fails at once.
import { existsSync } from "node:fs";
import { defineProbe } from "../../../agent/probes/types.js";

const dir = process.env.PROXYSCOPE_TEST_SCAN_DIR ?? "/nonexistent";
// ~512 MB of live arrays: never reached under the test's 128 MB old generation, and bounded so that a
// worker without limits (the code before resourceLimits) finishes the scan instead of filling memory.
const HOG_ARRAYS = 640;
const ARRAY_LENGTH = 100_000;

export const PROBES = [
  defineProbe("kernel", {
    async run() {
      if (existsSync(`${dir}/hog`)) {
        const kept: number[][] = [];
        for (let i = 0; i < HOG_ARRAYS; i++) {
          kept.push(new Array<number>(ARRAY_LENGTH).fill(i + 0.5));
          if (i % 16 === 0) await new Promise((r) => setImmediate(r));
        }
        return { ok: false, error: { kind: "exec-failed", message: `hog kept ${kept.length} arrays` } };
      }
      return { ok: false, error: { kind: "exec-failed", message: "stand-in kernel probe failed" } };
    },
  }),
];
