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
    async run(ctx) {
      if (at("crash")) {
        // An error nothing catches, as a bug deep in a parser would throw it: the thread dies.
        setImmediate(() => {
          throw new Error("stand-in parser bug");
        });
        await new Promise(() => {});
      }
      if (at("exit")) process.exit(7);
      if (at("orphan-crash") || at("orphan-hang")) {
        // A tool call still running when the thread dies: the test's fake nft (a shell that loops).
        void ctx.tools.run("nft", ["-j", "list", "chains"], { timeoutMs: FAILSAFE_MS, maxBytes: 1024 });
        // The test looks at the running tool first, then says go.
        while (!at("go")) await new Promise((r) => setTimeout(r, 20));
        if (at("orphan-crash")) {
          setImmediate(() => {
            throw new Error("stand-in crash mid-call");
          });
          await new Promise(() => {});
        }
        // Never yields again: only terminate() can end this thread.
        writeFileSync(`${dir}/spinning`, "");
        const started = Date.now();
        while (Date.now() - started < FAILSAFE_MS);
      }
      if (at("garbage")) {
        // What the hourly full read leaves behind at 10,000 Services: a large parsed listing, dropped.
        const text = JSON.stringify({
          nftables: Array.from({ length: 600_000 }, (_, i) => ({ chain: { name: `c-${i}` } })),
        });
        const items = (JSON.parse(text) as { nftables: unknown[] }).nftables.length;
        writeFileSync(`${dir}/garbage-made`, String(items));
      }
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
