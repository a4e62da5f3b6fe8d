import { readIpvsTable } from "../io/ipvs-table.js";
import type { ToolRunner } from "../io/run.js";
import { parseIpsetMembers } from "../parse/ipset-list.js";
import type { NodeReport } from "../report/schema.js";
import type { IpvsEvidence } from "./ipvs-proof.js";

// kube-proxy's sets hold one member per Service port: 10,000 Services make a few MB.
const MAX_BYTES = 256 * 1024 * 1024;

/**
 * What proves a virtual server kube-proxy's and the report does not carry: each one's
 * forwarding methods (/proc/net/ip_vs) and the members of kube-proxy's ipsets (`ipset list`).
 */
export async function readIpvsEvidence(
  report: NodeReport,
  procRoot: string,
  tools: ToolRunner,
  timeoutMs: number,
): Promise<IpvsEvidence> {
  if (!report.facts.ipvs?.virtualServerCount) return { read: true, forwards: new Map(), sets: new Map() };
  const t = await readIpvsTable(procRoot, { collectForwards: true });
  if (!t.ok) return { read: false, why: `${procRoot}/net/ip_vs: ${t.error.kind}: ${t.error.message}` };
  if (!t.available) return { read: false, why: `${procRoot}/net/ip_vs is gone since the scan` };
  const forwards = t.table.forwards ?? new Map<string, string[]>();
  // Without ip_set in the kernel there are no sets, and listing them would load the module.
  if (report.facts.ipsets?.available === false) return { read: true, forwards, sets: new Map() };
  const r = await tools.run("ipset", ["list"], { timeoutMs, maxBytes: MAX_BYTES });
  if (!r.ok) return { read: false, why: `ipset list: ${r.error.kind}: ${r.error.message}` };
  const p = parseIpsetMembers(r.stdout);
  if (!p.ok) return { read: false, why: `ipset list: ${p.error}` };
  return { read: true, forwards, sets: p.value };
}
