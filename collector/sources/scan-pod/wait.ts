import { CoreV1Api, KubeConfig, Watch, type V1Pod } from "@kubernetes/client-node";
import { deadline, describe, notFound } from "../kubernetes/index.js";
import { SCAN_CONTAINER, type ScanPodOptions } from "./spec.js";

/** Container states a pod does not leave by itself: waiting longer only ends at the deadline. */
const STUCK = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "ErrImageNeverPull",
  "CreateContainerConfigError",
  "CreateContainerError",
]);

type Ended = { ok: true; pod: V1Pod } | { ok: false; error: string };

/** Succeeded or Failed, a container stuck, or still going (null). */
function podOutcome(pod: V1Pod): Ended | null {
  const phase = pod.status?.phase;
  if (phase === "Succeeded" || phase === "Failed") return { ok: true, pod };
  for (const c of pod.status?.containerStatuses ?? []) {
    const w = c.state?.waiting;
    if (w?.reason && STUCK.has(w.reason))
      return {
        ok: false,
        error: `the scan pod's container cannot start: ${w.reason}${w.message ? `: ${w.message.slice(0, 300)}` : ""}`,
      };
  }
  return null;
}

/** Why a Failed pod failed: its container's exit and reason, or the pod's own reason (Evicted, DeadlineExceeded). */
export function failureOf(pod: V1Pod): string {
  const t = pod.status?.containerStatuses?.find((c) => c.name === SCAN_CONTAINER)?.state?.terminated;
  if (t) return `the scan exited ${t.exitCode}${t.reason ? ` (${t.reason})` : ""}`;
  const why = [pod.status?.reason, pod.status?.message].filter(Boolean).join(": ");
  return `the pod failed${why ? `: ${why.slice(0, 300)}` : ""}`;
}

export const interrupted = (signal: AbortSignal) =>
  `stopped by ${typeof signal.reason === "string" ? signal.reason : "a signal"}`;

/** Where the wait stands between watches: the resourceVersion to watch on from, and failures in a row. */
interface WaitState {
  rv: string | undefined;
  failures: number;
}

/** One watch's end: the pod's end (or the wait's), or `again` with why the watch stopped (null: it just ended). */
type Round = Ended | { again: true; error: string | null };

const tooLong = (o: ScanPodOptions): Ended => ({
  ok: false,
  error: `the scan did not end within ${o.waitS} s (--wait-s)`,
});
const deletedByOther = (): Ended => ({
  ok: false,
  error: "the scan pod was deleted by someone else before it ended",
});

/**
 * Waits for the pod to end by watching it (GET .../pods?watch=true&fieldSelector=metadata.name=NAME from
 * the resourceVersion it was created at, so no change is missed); a watch the server ends (its
 * timeoutSeconds) or drops is followed by a GET and a new watch. Ends on the pod ending, a stuck
 * container, the pod deleted by someone else, the wait's deadline or the caller's signal.
 */
export async function waitForEnd(
  kc: KubeConfig,
  core: CoreV1Api,
  o: ScanPodOptions,
  created: V1Pod,
  signal: AbortSignal,
): Promise<Ended> {
  const name = created.metadata?.name ?? "";
  const until = Date.now() + o.waitS * 1000;
  const state: WaitState = { rv: created.metadata?.resourceVersion, failures: 0 };
  const first = podOutcome(created);
  if (first) return first;
  for (;;) {
    if (signal.aborted) return { ok: false, error: interrupted(signal) };
    const left = until - Date.now();
    if (left <= 0) return tooLong(o);
    const round = await watchRound(kc, o, name, state, left, signal);
    if (!("again" in round)) return round;
    if (round.error !== null && ++state.failures >= 3)
      return { ok: false, error: `cannot watch pod ${o.namespace}/${name}: ${round.error}` };
    const now = await readAfterWatch(core, o, name, state);
    if (now) return now;
  }
}

/** One watch of the pod, from `state.rv`, until the pod ends, the watch ends, the deadline or the signal. */
function watchRound(
  kc: KubeConfig,
  o: ScanPodOptions,
  name: string,
  state: WaitState,
  left: number,
  signal: AbortSignal,
): Promise<Round> {
  return new Promise<Round>((resolve) => {
    let settled = false;
    let controller: AbortController | null = null;
    const finish = (v: Round) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      controller?.abort();
      resolve(v);
    };
    const timer = setTimeout(() => finish(tooLong(o)), left);
    const onAbort = () => finish({ ok: false, error: interrupted(signal) });
    signal.addEventListener("abort", onAbort, { once: true });
    new Watch(kc)
      .watch(
        `/api/v1/namespaces/${encodeURIComponent(o.namespace)}/pods`,
        {
          fieldSelector: `metadata.name=${name}`,
          resourceVersion: state.rv,
          allowWatchBookmarks: true,
          timeoutSeconds: Math.max(1, Math.min(300, Math.ceil(left / 1000))),
        },
        (type: string, obj: V1Pod & { code?: number; message?: string }) => {
          if (type === "ERROR") return finish({ again: true, error: null }); // 410 Gone: GET, then watch anew
          if (obj?.metadata?.resourceVersion) state.rv = obj.metadata.resourceVersion;
          if (type === "BOOKMARK") return;
          state.failures = 0;
          if (type === "DELETED") return finish(deletedByOther());
          const end = podOutcome(obj);
          if (end) finish(end);
        },
        (err: unknown) =>
          finish({ again: true, error: err ? describe(err as Error) || "watch failed" : null }),
      )
      .then(
        (c) => {
          controller = c;
          if (settled) c.abort();
        },
        (e: unknown) => finish({ again: true, error: describe(e) }),
      );
  });
}

/** The watch ended: where the pod is now, and the resourceVersion to watch on from; null: still going. */
async function readAfterWatch(
  core: CoreV1Api,
  o: ScanPodOptions,
  name: string,
  state: WaitState,
): Promise<Ended | null> {
  try {
    const now = await core.readNamespacedPod({ name, namespace: o.namespace }, deadline(o.timeoutMs));
    state.rv = now.metadata?.resourceVersion;
    return podOutcome(now);
  } catch (e) {
    if (notFound(e)) return deletedByOther();
    if (++state.failures >= 3)
      return { ok: false, error: `cannot read pod ${o.namespace}/${name}: ${describe(e)}` };
    return null;
  }
}
