import { z } from "zod";
import { parseBoundedJson } from "../../../common/bounded-json.js";
import { httpGet, httpGetVia, type Getter, type HttpResult } from "../../../common/http.js";
import type { Lease } from "../../gather/byte-budget.js";
import { ANSWER_JSON_BOUNDS } from "../../gather/answer-bounds.js";
import type { AgentTarget } from "./target.js";

// How a GET to an agent goes: one retry for what may pass, kept-alive connections for direct calls,
// and the API server's own refusal told apart from the agent's answer when the pod proxy carries it.

// A refused connection or a 5xx gets one more try; an answer we did not like will not improve on a
// retry, and neither will a call that already used its whole deadline: retrying those doubled the wait
// on every hung agent and made up most of a 5,000-node gather (bench/results/profiles).
const transient = (r: HttpResult) => (!r.ok ? r.error.kind === "unreachable" : r.status >= 500);

export async function fetchWithRetry(
  url: string,
  opts: { timeoutMs: number; maxBytes: number; hold?: Lease; left?: () => number },
  get: Getter = httpGet,
) {
  const first = await get(url, opts);
  if (!transient(first)) return first;
  // The retry fits in what is left of the gather's deadline, or is not made.
  const left = opts.left ? opts.left() : Infinity;
  if (left <= 0) return first;
  opts.hold?.reset();
  return get(url, { ...opts, timeoutMs: Math.min(opts.timeoutMs, left) });
}

const ApiStatus = z.object({
  kind: z.literal("Status"),
  status: z.literal("Failure"),
  message: z.string().optional(),
  reason: z.string().optional(),
  code: z.number().optional(),
});

/**
 * Through the API server, a non-200 may be the API server's own answer rather than the agent's: a
 * metav1.Status. "error trying to reach service: …" (503 ServiceUnavailable, apimachinery's proxy
 * transport) means the agent could not be reached; 403 Forbidden means our RBAC lacks pods/proxy.
 * null: a direct target, or an answer that is not the API server's.
 */
export function proxyRefusal(
  t: AgentTarget,
  res: { status: number; body: string },
): { unreachable: boolean; reason: string } | null {
  if (t.get === undefined) return null;
  const read = parseBoundedJson(res.body, ANSWER_JSON_BOUNDS);
  if (!read.ok) return null;
  const parsed = ApiStatus.safeParse(read.doc);
  if (!parsed.success) return null;
  const st = parsed.data;
  const msg = (st.message ?? "").slice(0, 300);
  const said = `the API server answered HTTP ${res.status} ${st.reason ?? ""}${msg ? `: ${msg}` : ""}`;
  const ns = decodeURIComponent(/\/namespaces\/([^/]+)\/pods\//.exec(t.url)?.[1] ?? "NAMESPACE");
  if (res.status === 403)
    return {
      unreachable: false,
      reason: `${said} (pods/proxy needs RBAC: kubectl create rolebinding proxyscope-laptop -n ${ns} --clusterrole=proxyscope-laptop --user=YOU; docs/cli.md)`,
    };
  return {
    unreachable:
      res.status === 503 &&
      /error trying to reach service|error dialing backend|no agent available/i.test(msg),
    reason: `${said} (through the pod proxy)`,
  };
}

/**
 * Direct calls over node:http with kept-alive connections, as the benchmark's floor fetches: fetch's
 * machinery was ~14 % of a CPU-bound 5,000-node gather (bench/results/collector-speed.md). Loaded on
 * first use.
 */
export async function keepAlivePool(): Promise<{ get: Getter; close: () => void }> {
  const [http, https] = await Promise.all([import("node:http"), import("node:https")]);
  const plain = new http.Agent({ keepAlive: true });
  const tls = new https.Agent({ keepAlive: true });
  return {
    get: (url, o) => httpGetVia(url, { agent: url.startsWith("https:") ? tls : plain, headers: {} }, o),
    close: () => {
      plain.destroy();
      tls.destroy();
    },
  };
}
