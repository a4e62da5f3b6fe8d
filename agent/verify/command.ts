import { renderStructured } from "../../common/structured.js";
import type { AgentConfig } from "../config.js";
import type { ScanInput } from "../scan.js";
import { VERSION as AGENT_VERSION } from "../../common/version.js";
import { renderVerify } from "../../common/verify-render.js";
import { runVerify } from "./run.js";
import { verifyOptions } from "./options.js";

/** `proxyscope-agent verify`: exit 0 when every check passes, 1 otherwise. */
export async function verifyCommand(cfg: AgentConfig, input: ScanInput): Promise<number> {
  const result = await runVerify(
    { ...input, node: cfg.node, agentVersion: AGENT_VERSION },
    verifyOptions(cfg),
  );
  process.stdout.write(
    cfg.output === "text" ? `${renderVerify(result)}\n` : renderStructured(result, cfg.output),
  );
  return result.passed ? 0 : 1;
}
