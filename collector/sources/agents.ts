import { z } from "zod";
import { RealServer, VirtualServer } from "../../agent/contract.js";
import { httpGet, type HttpResult } from "../../common/http.js";
import { failedObservation, observationFromReport, parseNodeReport } from "../observe.js";
import { mapPool } from "../pool.js";
import type { NodeObservation } from "../report/schema.js";

export interface AgentTarget {
  /** The node the API places this agent on; null when only a URL is known (static list). */
  node: string | null;
  /** Base URL of the agent, e.g. http://10.0.0.7:9977 */
  url: string;
}

export interface FetchOptions {
  timeoutMs: number;
  concurrency: number;
  /** A NodeReport of a 10,000-Service node is cut by the agent; this is far above it. */
  maxBytes: number;
  onProgress?: (done: number, total: number) => void;
  /** The clock staleness is judged by (ms since the epoch); Date.now unless a test fixes it. */
  now?: () => number;
}

/** A report older than this is stale, from an agent or from Prometheus alike (a scan runs every 60 s). */
export const STALE_AFTER_S = 900;

export const DEFAULT_MAX_REPORT_BYTES = 16 * 1024 * 1024;

// A refused connection or a 5xx gets one more try; an answer we did not like will not improve on a
// retry, and neither will a call that already used its whole deadline: retrying those doubled the wait
// on every hung agent and made up most of a 5,000-node gather (bench/results/profiles).
const transient = (r: HttpResult) => (!r.ok ? r.error.kind === "unreachable" : r.status >= 500);

export async function fetchWithRetry(url: string, opts: { timeoutMs: number; maxBytes: number }) {
  const first = await httpGet(url, opts);
  return transient(first) ? httpGet(url, opts) : first;
}

export async function fetchAgent(t: AgentTarget, opts: FetchOptions): Promise<NodeObservation> {
  const url = `${t.url.replace(/\/+$/, "")}/report`;
  const label = t.node ?? t.url;
  const res = await fetchWithRetry(url, opts);
  if (!res.ok) {
    const kind = res.error.kind;
    const outcome = kind === "timeout" ? "timeout" : kind === "output-cap" ? "garbage" : "unreachable";
    const retried = res.error.kind === "unreachable" ? " (after one retry)" : "";
    return failedObservation(label, url, outcome, `${res.error.message}${retried}`);
  }
  if (res.status !== 200)
    return failedObservation(label, url, "http-status", `${url} answered HTTP ${res.status}`);
  const parsed = parseNodeReport(res.body);
  if (!parsed.ok) return failedObservation(label, url, parsed.outcome, `${url}: ${parsed.reason}`);
  // An agent whose scans stopped still serves its last report: old news must not pass as the node now.
  const ageS = ((opts.now ?? Date.now)() - Date.parse(parsed.report.scannedAt)) / 1000;
  if (ageS > STALE_AFTER_S)
    return failedObservation(
      t.node ?? parsed.report.node,
      url,
      "stale",
      `${url}: report scanned at ${parsed.report.scannedAt}, ${Math.round(ageS)} s ago (stale after ${STALE_AFTER_S} s)`,
    );
  return observationFromReport(parsed.report, url, t.node ?? parsed.report.node);
}

/** Every target's outcome, in target order; bounded concurrency, never throws. */
export function fetchAgents(targets: readonly AgentTarget[], opts: FetchOptions): Promise<NodeObservation[]> {
  return mapPool(targets, opts.concurrency, (t) => fetchAgent(t, opts), opts.onProgress);
}

const VirtualServerAnswer = z.object({ virtualServer: VirtualServer, realServers: z.array(RealServer) });
export type VirtualServerAnswer = z.infer<typeof VirtualServerAnswer>;

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
  const res = await fetchWithRetry(url, { timeoutMs: opts.timeoutMs, maxBytes: 4 * 1024 * 1024 });
  if (!res.ok) return { node, ok: false, reason: res.error.message };
  if (res.status !== 200) {
    const msg = /"error":"([^"]*)"/.exec(res.body)?.[1];
    return { node, ok: false, reason: `HTTP ${res.status}${msg ? `: ${msg}` : ""}` };
  }
  try {
    const parsed = VirtualServerAnswer.safeParse(JSON.parse(res.body));
    if (parsed.success) return { node, ok: true, answer: parsed.data };
    return { node, ok: false, reason: `unexpected answer: ${parsed.error.issues[0]?.message}` };
  } catch {
    return { node, ok: false, reason: "answer is not JSON" };
  }
}
