import type { AgentTarget } from "../sources/agents.js";
import { readTargetsFile, targetsFromFlags } from "../sources/static.js";
import type { GatherConfig } from "./types.js";

/** --source static's agents, from --agents and --agents-file; a list that cannot work is a usage error. */
export async function staticTargets(
  cfg: Pick<GatherConfig, "agents" | "agentsFile">,
): Promise<{ ok: true; targets: AgentTarget[] } | { ok: false; error: string; usage: true }> {
  const lists = [
    targetsFromFlags(cfg.agents),
    ...(cfg.agentsFile ? [await readTargetsFile(cfg.agentsFile)] : []),
  ];
  const errors = lists.flatMap((l) => l.errors);
  if (errors.length > 0) return { ok: false, error: errors.join("; "), usage: true };
  const targets = lists.flatMap((l) => l.targets);
  if (targets.length === 0)
    return {
      ok: false,
      error: cfg.agentsFile
        ? "--agents-file lists no agent"
        : "--source static needs --agents URL... or --agents-file",
      usage: true,
    };
  return { ok: true, targets };
}
