import type { Logger } from "pino";
import type { ToolRunner } from "../io/run.js";
import { writeSysctl } from "../io/sysctl-write.js";
import type { ActionResult, CleanupAction } from "./schema.js";

interface ExecuteContext {
  tools: ToolRunner;
  procRoot: string;
  timeoutMs: number;
  log: Logger;
}

async function runOne(a: CleanupAction, ctx: ExecuteContext): Promise<string | null> {
  if (a.run.kind === "sysctl") {
    const w = await writeSysctl(ctx.procRoot, a.run.name, a.run.value);
    return w.ok ? null : `${w.path}: ${w.error}`;
  }
  const r = await ctx.tools.run(a.run.tool, a.run.args, { timeoutMs: ctx.timeoutMs, maxBytes: 1024 * 1024 });
  return r.ok ? null : r.error.message;
}

/**
 * Runs the plan in order, one action at a time. A failed action is logged and reported and the
 * rest still run: each is safe on its own, and stopping half way would hide what else was left.
 */
export async function executePlan(
  actions: readonly CleanupAction[],
  ctx: ExecuteContext,
): Promise<ActionResult[]> {
  const results: ActionResult[] = [];
  for (const action of actions) {
    ctx.log.info({ step: action.step, target: action.target, command: action.command }, "cleanup action");
    const started = performance.now();
    const error = await runOne(action, ctx);
    const durationMs = Math.round((performance.now() - started) * 10) / 10;
    if (error === null) ctx.log.info({ command: action.command, durationMs }, "cleanup action succeeded");
    else ctx.log.error({ command: action.command, error, durationMs }, "cleanup action failed");
    results.push({ action, ok: error === null, error, durationMs });
  }
  return results;
}
