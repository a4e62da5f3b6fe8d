import type { ProbeError } from "../facts/probe-error.js";
import { parseNftGeneration } from "../parse/nft-generation.js";
import type { ToolRunner } from "./run.js";

export type GenerationRead = { ok: true; generation: number } | { ok: false; error: ProbeError };

const TOOL = "proxyscope-nft-generation";

/** The nf_tables ruleset generation id of this network namespace, or why it is not known. */
export async function readNftGeneration(tools: ToolRunner, timeoutMs: number): Promise<GenerationRead> {
  const r = await tools.run(TOOL, [], { timeoutMs, maxBytes: 64 });
  if (!r.ok) {
    // Exit 3: the kernel has no nf_tables (nft-generation.c), so there is nothing to cache either way.
    if (r.error.kind === "exit-status" && /exited 3\b/.test(r.error.message))
      return { ok: false, error: { ...r.error, message: `kernel without nf_tables (${r.error.message})` } };
    return r;
  }
  const p = parseNftGeneration(r.stdout);
  return p.ok
    ? { ok: true, generation: p.value }
    : { ok: false, error: { kind: "garbage", message: p.error, command: TOOL } };
}
