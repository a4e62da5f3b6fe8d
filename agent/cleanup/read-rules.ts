import type { ToolRunner } from "../io/run.js";
import type { ToolName } from "../io/tools.js";
import type { NodeReport } from "../report/schema.js";
import { RuleSetParser, type IptablesRuleSet } from "./iptables-rules.js";
import type { RuleSetRead } from "./plan.js";

const SAVE_TOOL: Record<IptablesRuleSet["backend"], Record<IptablesRuleSet["family"], ToolName>> = {
  legacy: { ipv4: "iptables-legacy-save", ipv6: "ip6tables-legacy-save" },
  nft: { ipv4: "iptables-nft-save", ipv6: "ip6tables-nft-save" },
};
const MAX_BYTES = 512 * 1024 * 1024;

/**
 * The rule text cleanup needs and the report does not carry (the report counts chains; deleting a
 * jump rule needs its exact argv). Only backends the scan could read; streamed, never held whole.
 */
export async function readRuleSets(
  report: NodeReport,
  tools: ToolRunner,
  timeoutMs: number,
): Promise<RuleSetRead[]> {
  const out: RuleSetRead[] = [];
  for (const b of report.facts.iptables?.backends ?? []) {
    if (!b.read) {
      out.push({
        backend: b.backend,
        family: b.family,
        error: `not read by the scan: ${b.why.kind}: ${b.why.message}`,
      });
      continue;
    }
    const parser = new RuleSetParser();
    const tool = SAVE_TOOL[b.backend][b.family];
    const r = await tools.streamLines(tool, [], { timeoutMs, maxBytes: MAX_BYTES }, (l) => parser.feed(l));
    if (!r.ok) {
      out.push({ backend: b.backend, family: b.family, error: `${tool}: ${r.error.message}` });
      continue;
    }
    const p = parser.finish();
    out.push(
      p.ok
        ? { backend: b.backend, family: b.family, tables: p.tables }
        : { backend: b.backend, family: b.family, error: `${tool}: ${p.error}` },
    );
  }
  return out;
}
