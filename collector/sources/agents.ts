import type { Getter } from "../../common/http.js";
import { MAX_ANSWER_BYTES, TOO_LARGE } from "../gather/answer-bounds.js";
import { AnswerJudge, inlineJudge, type Judge } from "../gather/answer-judge.js";
import type { ByteBudget, Lease } from "../gather/byte-budget.js";
import { failedObservation, observationFromDigest, type ParsedDigest } from "../gather/observe.js";
import { mapPool } from "../gather/pool.js";
import type { NodeObservation } from "../report/schema.js";
import type { AgentTarget } from "./agents/target.js";
import { fetchWithRetry, keepAlivePool, proxyRefusal } from "./agents/transport.js";

// The fleet from the agents themselves: each node's digest, read and judged here; how a GET goes in
// agents/transport.ts, lc-audit's one-virtual-server read in agents/virtual-server.ts.
export type { AgentTarget } from "./agents/target.js";
export { proxyRefusal } from "./agents/transport.js";
export {
  fetchVirtualServer,
  type VirtualServerAnswer,
  type VirtualServerOutcome,
} from "./agents/virtual-server.js";

interface FetchOptions {
  timeoutMs: number;
  concurrency: number;
  /** A NodeReport of a 10,000-Service node is cut by the agent; this is far above it (gather/answer-bounds.ts). */
  maxBytes: number;
  /** Where answers are parsed; fetchAgents gives one heap-limited worker per gather, else this thread. */
  judge?: Judge;
  /** Bytes held across all concurrent reads of one gather; none: only the per-answer cap. */
  budget?: ByteBudget;
  onProgress?: (done: number, total: number) => void;
  /** The clock staleness is judged by (ms since the epoch); Date.now unless a test fixes it. */
  now?: () => number;
  /**
   * One deadline for the whole gather, in ms from its start: a call never outlives it (its own
   * timeout is cut to what is left) and a target not yet asked when it passes is not asked at all.
   */
  deadlineMs?: number;
  /** A monotonic clock in ms for the deadline; performance.now unless a test drives it. */
  clockMs?: () => number;
  /** How a target without its own route is reached; fetchAgents gives one keep-alive pool per gather. */
  get?: Getter;
}

/** When the gather must be done, and what is left of it. */
class Deadline {
  private readonly end: number;
  constructor(
    readonly ms: number,
    private readonly clock: () => number,
  ) {
    this.end = clock() + ms;
  }
  left(): number {
    return Math.floor(this.end - this.clock());
  }
}

/** A report older than this is stale, from an agent or from Prometheus alike (a scan runs every 60 s). */
export const STALE_AFTER_S = 900;

export const DEFAULT_MAX_REPORT_BYTES = MAX_ANSWER_BYTES;

/** The agent's FleetDigest; an agent older than it answers 404 there and is read on /report. */
const FLEET_PATH = "/report/fleet";
const REPORT_PATH = "/report";

export async function fetchAgent(
  t: AgentTarget,
  // One call: concurrency is fetchAgents' business.
  opts: Omit<FetchOptions, "concurrency">,
  deadline?: Deadline,
): Promise<NodeObservation> {
  const base = t.url.replace(/\/+$/, "");
  const url = `${base}${FLEET_PATH}`;
  const left = deadline ? deadline.left() : Infinity;
  // Unasked is unanswered: a timeout row, never a node without a report.
  if (left <= 0) return notAsked(t, url, deadline!);
  const lease = opts.budget?.lease();
  try {
    return await readAgent(t, base, deadline, {
      ...(opts.get ? { get: opts.get } : {}),
      timeoutMs: Math.min(opts.timeoutMs, left),
      ...(deadline ? { left: () => deadline.left() } : {}),
      maxBytes: opts.maxBytes,
      ...(lease ? { hold: lease } : {}),
      ...(opts.now ? { now: opts.now } : {}),
      ...(opts.judge ? { judge: opts.judge } : {}),
    });
  } finally {
    // Held until the answer is judged: the body and its parse are the bytes the budget is about.
    lease?.release();
  }
}

const notAsked = (t: AgentTarget, url: string, deadline: Deadline) =>
  failedObservation(
    t.node ?? t.url,
    url,
    "timeout",
    `${url} was not asked: the gather's deadline of ${deadline.ms} ms had passed`,
  );

interface ReadOptions {
  timeoutMs: number;
  maxBytes: number;
  hold?: Lease;
  now?: () => number;
  left?: () => number;
  get?: Getter;
  judge?: Judge;
}

/** What one GET came to: a body to judge, or the node's failure already. */
async function call(
  t: AgentTarget,
  url: string,
  opts: ReadOptions,
): Promise<{ body: string } | { status: 404; failed: NodeObservation } | { failed: NodeObservation }> {
  const label = t.node ?? t.url;
  const res = await fetchWithRetry(url, opts, t.get ?? opts.get);
  if (!res.ok) {
    const kind = res.error.kind;
    const outcome = kind === "timeout" ? "timeout" : kind === "output-cap" ? "garbage" : "unreachable";
    const retried = res.error.kind === "unreachable" ? " (after one retry)" : "";
    const why = kind === "output-cap" ? `${TOO_LARGE}: ` : "";
    return { failed: failedObservation(label, url, outcome, `${why}${res.error.message}${retried}`) };
  }
  if (res.status !== 200) {
    const api = proxyRefusal(t, res);
    if (api)
      return {
        failed: failedObservation(
          label,
          url,
          api.unreachable ? "unreachable" : "http-status",
          `${url}: ${api.reason}`,
        ),
      };
    const failed = failedObservation(label, url, "http-status", `${url} answered HTTP ${res.status}`);
    // Only the agent's own 404 (not the API server's Status) says the route is unknown to it.
    return res.status === 404 ? { status: 404, failed } : { failed };
  }
  return { body: res.body };
}

async function readAgent(
  t: AgentTarget,
  base: string,
  deadline: Deadline | undefined,
  opts: ReadOptions,
): Promise<NodeObservation> {
  let url = `${base}${FLEET_PATH}`;
  let got = await call(t, url, opts);
  const judge = opts.judge ?? inlineJudge;
  let parsed: ParsedDigest;
  if ("status" in got) {
    // An agent older than /report/fleet (a DaemonSet mid-rollout): its whole report, digested by the
    // agent's own function (judgeAnswer), so both routes give the same observation and the same outcomes.
    url = `${base}${REPORT_PATH}`;
    const left = deadline ? deadline.left() : Infinity;
    if (left <= 0) return notAsked(t, url, deadline!);
    opts.hold?.reset();
    got = await call(t, url, { ...opts, timeoutMs: Math.min(opts.timeoutMs, left) });
    if (!("body" in got)) return got.failed;
    parsed = await judge.judge("report", got.body);
  } else {
    if (!("body" in got)) return got.failed;
    parsed = await judge.judge("fleet", got.body);
  }
  const label = t.node ?? t.url;
  if (!parsed.ok) return failedObservation(label, url, parsed.outcome, `${url}: ${parsed.reason}`);
  const claimed = parsed.digest.node;
  // The target decides the row: an answer for another node is not that node's report, nor this one's.
  if (t.node !== null && claimed !== t.node)
    return failedObservation(
      t.node,
      url,
      "wrong-node",
      `${url} answered for node ${quoteName(claimed)}, not ${quoteName(t.node)} (a wrong or reused address?); its answer is not used`,
    );
  // An agent whose scans stopped still serves its last report: old news must not pass as the node now.
  const scannedAt = parsed.digest.scannedAt;
  const ageS = ((opts.now ?? Date.now)() - Date.parse(scannedAt)) / 1000;
  if (ageS > STALE_AFTER_S)
    return failedObservation(
      t.node ?? claimed,
      url,
      "stale",
      `${url}: report scanned at ${scannedAt}, ${Math.round(ageS)} s ago (stale after ${STALE_AFTER_S} s)`,
    );
  return observationFromDigest(parsed.digest, url, t.node ?? claimed, parsed.unknown);
}

const quoteName = (s: string) => JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);

/**
 * A URL-only target names no node, so its agent's claim is all there is. A claim is kept only when it
 * is uncontested: a node another target names, or one that two URL-only agents both claim, would make
 * one answer stand for another node (and the rollup keep one of them, hiding the other). Each such
 * answer becomes a wrong-node failure on its own row, named by its URL: every target keeps one row.
 */
function settleClaims(targets: readonly AgentTarget[], obs: readonly NodeObservation[]): NodeObservation[] {
  const named = new Set(targets.flatMap((t) => (t.node !== null ? [t.node] : [])));
  const claims = new Map<string, number>();
  targets.forEach((t, i) => {
    const o = obs[i]!;
    if (t.node === null && o.outcome === "ok") claims.set(o.node, (claims.get(o.node) ?? 0) + 1);
  });
  return obs.map((o, i) => {
    const t = targets[i]!;
    if (t.node !== null || o.outcome !== "ok") return o;
    const taken = named.has(o.node);
    const shared = (claims.get(o.node) ?? 0) > 1;
    if (!taken && !shared) return o;
    const why = taken
      ? "another target names that node"
      : `${claims.get(o.node)} URL-only targets answered for that node`;
    return failedObservation(
      t.url,
      o.endpoint,
      "wrong-node",
      `the agent at ${t.url} says it is node ${quoteName(o.node)}, but ${why}; a URL alone cannot tell whose answer it is: list it as "NODE URL"`,
    );
  });
}

/** Every target's outcome, in target order, one per target; bounded concurrency, never throws. */
export async function fetchAgents(
  targets: readonly AgentTarget[],
  opts: FetchOptions,
): Promise<NodeObservation[]> {
  const deadline =
    opts.deadlineMs === undefined
      ? undefined
      : new Deadline(opts.deadlineMs, opts.clockMs ?? (() => performance.now()));
  const pool = opts.get || targets.every((t) => t.get) ? null : await keepAlivePool();
  // Answers are parsed where a heap limit applies: a hostile one costs its own node, not the collector.
  const judge = opts.judge ? null : new AnswerJudge();
  try {
    const o = { ...opts, ...(pool ? { get: pool.get } : {}), ...(judge ? { judge } : {}) };
    const obs = await mapPool(targets, opts.concurrency, (t) => fetchAgent(t, o, deadline), opts.onProgress);
    return settleClaims(targets, obs);
  } finally {
    pool?.close();
    await judge?.close();
  }
}
