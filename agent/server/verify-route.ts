import type { FastifyInstance } from "fastify";
import { fail } from "../../common/http-server.js";
import type { VerifyResult } from "../../common/verify-result.js";
import type { AgentState } from "./state.js";

// A verification waits out the sync window and opens a TCP connection: never more than one at a time,
// and a fresh result is served again rather than recomputed, however often the collector asks.
const REUSE_MS = 15_000;

/**
 * GET /verify: the node acceptance check over the last scan (never a new scan), plus a fresh read of
 * kube-proxy's /metrics and the Service connect. Always 200 with a VerifyResult; `passed` says.
 * `verify` checks the last report where it lives (the scan thread: ScanThread.verify), so this
 * thread never holds a report to check.
 */
export function registerVerifyRoute(
  app: FastifyInstance,
  state: AgentState,
  verify: () => Promise<VerifyResult>,
  now: () => number = Date.now,
): void {
  let running: Promise<VerifyResult> | null = null;
  let last: { atMs: number; result: VerifyResult } | null = null;
  app.get("/verify", async (_req, reply) => {
    const scan = state.current;
    if (scan === null) return reply.code(503).send({ error: "no scan has completed yet" });
    if (last !== null && now() - last.atMs < REUSE_MS && last.atMs >= scan.completedAtMs) {
      return reply.header("x-verify-age-seconds", ((now() - last.atMs) / 1000).toFixed(3)).send(last.result);
    }
    // Callers that arrive while one runs share its answer.
    running ??= verify().finally(() => {
      running = null;
    });
    let result: VerifyResult;
    try {
      result = await running;
    } catch (e) {
      // The scan thread crashed or exited mid-check: no result, and the next call tries again.
      return fail(reply, 503, `verify did not finish: ${(e as Error).message}`);
    }
    last = { atMs: now(), result };
    return reply.header("x-verify-age-seconds", "0.000").send(result);
  });
}
