import type { FastifyInstance } from "fastify";
import type { ScanInput } from "../scan.js";
import { verifyReport, type VerifyOptions } from "../verify/run.js";
import type { VerifyResult } from "../../common/verify-result.js";
import type { AgentState } from "./state.js";

// A verification waits out the sync window and opens a TCP connection: never more than one at a time,
// and a fresh result is served again rather than recomputed, however often the collector asks.
const REUSE_MS = 15_000;

/**
 * GET /verify: the node acceptance check over the last scan (never a new scan), plus a fresh read of
 * kube-proxy's /metrics and the Service connect. Always 200 with a VerifyResult; `passed` says.
 */
export function registerVerifyRoute(
  app: FastifyInstance,
  state: AgentState,
  input: ScanInput,
  opts: VerifyOptions,
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
    running ??= verifyReport(scan.report, input, opts).finally(() => {
      running = null;
    });
    const result = await running;
    last = { atMs: now(), result };
    return reply.header("x-verify-age-seconds", "0.000").send(result);
  });
}
