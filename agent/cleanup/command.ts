import { renderStructured } from "../../common/structured.js";
import { pino } from "pino";
import type { AgentConfig } from "../config.js";
import type { ScanInput } from "../scan.js";
import { VERSION as AGENT_VERSION } from "../../common/version.js";
import { cleanupExitCode, renderCleanup } from "./render.js";
import { runCleanup } from "./run.js";

/** `proxyscope-agent cleanup`: a dry run unless --apply; the log (every action, every result) goes to stderr. */
export async function cleanupCommand(cfg: AgentConfig, input: ScanInput): Promise<number> {
  const log = pino({ level: cfg.logLevel, base: { node: cfg.node, task: "cleanup" } }, pino.destination(2));
  const outcome = await runCleanup(
    { ...input, node: cfg.node, agentVersion: AGENT_VERSION },
    { apply: cfg.apply, strictArp: cfg.strictArp, log },
  );
  log.flush();
  process.stdout.write(
    cfg.output === "text" ? `${renderCleanup(outcome)}\n` : renderStructured(outcome, cfg.output),
  );
  return cleanupExitCode(outcome);
}
