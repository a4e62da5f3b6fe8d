import { z } from "zod";
import { RealServer, VirtualServer } from "../../../agent/contract.js";
import { parseBoundedJson } from "../../../common/bounded-json.js";
import { ANSWER_JSON_BOUNDS, TOO_LARGE } from "../../gather/answer-bounds.js";
import type { AgentTarget } from "./target.js";
import { fetchWithRetry, proxyRefusal } from "./transport.js";

export interface VirtualServerAnswer {
  virtualServer: VirtualServer;
  realServers: RealServer[];
}
// The list is checked one entry at a time, stopping at the first bad one: zod judging a hostile list
// whole names every missing field of every entry, a heap far larger than the answer.
const VirtualServerHead = z.object({ virtualServer: VirtualServer, realServers: z.array(z.unknown()) });

function virtualServerAnswer(
  doc: unknown,
): { ok: true; answer: VirtualServerAnswer } | { ok: false; why: string } {
  const head = VirtualServerHead.safeParse(doc);
  if (!head.success) return { ok: false, why: `unexpected answer: ${head.error.issues[0]?.message}` };
  const realServers: RealServer[] = [];
  for (const [i, r] of head.data.realServers.entries()) {
    const one = RealServer.safeParse(r);
    if (!one.success)
      return { ok: false, why: `unexpected answer: realServers.${i}: ${one.error.issues[0]?.message}` };
    realServers.push(one.data);
  }
  return { ok: true, answer: { virtualServer: head.data.virtualServer, realServers } };
}

export type VirtualServerOutcome =
  { node: string; ok: true; answer: VirtualServerAnswer } | { node: string; ok: false; reason: string };

/** One node's IPVS view of one virtual server, from the agent's /ipvs/virtual-server. */
export async function fetchVirtualServer(
  t: AgentTarget,
  q: { protocol: string; address: string; port: number },
  opts: { timeoutMs: number },
): Promise<VirtualServerOutcome> {
  const node = t.node ?? t.url;
  const qs = new URLSearchParams({ protocol: q.protocol, address: q.address, port: String(q.port) });
  const url = `${t.url.replace(/\/+$/, "")}/ipvs/virtual-server?${qs}`;
  const res = await fetchWithRetry(url, { timeoutMs: opts.timeoutMs, maxBytes: 4 * 1024 * 1024 }, t.get);
  if (!res.ok) return { node, ok: false, reason: res.error.message };
  const api = res.status !== 200 ? proxyRefusal(t, res) : null;
  if (api) return { node, ok: false, reason: api.reason };
  if (res.status !== 200) {
    const msg = /"error":"([^"]*)"/.exec(res.body)?.[1];
    return { node, ok: false, reason: `HTTP ${res.status}${msg ? `: ${msg}` : ""}` };
  }
  const read = parseBoundedJson(res.body, ANSWER_JSON_BOUNDS);
  if (!read.ok)
    return {
      node,
      ok: false,
      reason: read.kind === "not-json" ? "answer is not JSON" : `${TOO_LARGE}: ${read.message}`,
    };
  const answer = virtualServerAnswer(read.doc);
  return answer.ok ? { node, ok: true, answer: answer.answer } : { node, ok: false, reason: answer.why };
}
