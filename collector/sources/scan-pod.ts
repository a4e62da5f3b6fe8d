import { randomBytes } from "node:crypto";
import { CoreV1Api, KubeConfig, Watch, type V1Pod } from "@kubernetes/client-node";
import { redactUrls } from "../../common/redact.js";
import type { Result } from "../../common/result.js";
import { deadline, describe, notFound } from "./kubernetes/index.js";

/** The label every scan pod carries: `kubectl get pods -A -l app.kubernetes.io/component=scan-node`. */
export const SCAN_POD_LABELS = {
  "app.kubernetes.io/name": "proxyscope",
  "app.kubernetes.io/component": "scan-node",
  "app.kubernetes.io/managed-by": "proxyscope",
} as const;
export const SCAN_CONTAINER = "scan";
/** The agent's report of a node with 10,000 Services is a few MiB; a log past this is not one report. */
export const MAX_LOG_BYTES = 32 * 1024 * 1024;

export interface ScanPodOptions {
  node: string;
  namespace: string;
  image: string;
  /** How long the pod may take, image pull included; the kubelet ends it a little after (activeDeadlineSeconds). */
  waitS: number;
  /** Deadline of each API call. */
  timeoutMs: number;
}

/** Pod names are DNS subdomains; the node's name is cut so the name stays a valid hostname label too. */
export function scanPodName(node: string, suffix = randomBytes(4).toString("hex").slice(0, 5)): string {
  const base = node
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, "-")
    .slice(0, 40)
    .replace(/-+$/, "");
  return `proxyscope-scan-${base}-${suffix}`;
}

/**
 * The pod `kubectl debug node/NODE --profile=sysadmin` makes (kubectl v0.37.0 pkg/cmd/debug/debug.go
 * generateNodeDebugPod: nodeName, restartPolicy Never, a toleration of every taint; profiles.go
 * sysadminProfile: privileged, the host's network and PID namespaces, hostPath / at /host), narrowed to
 * what a scan needs: / read-only, no host IPC, no service account token (the scan reads no API), and
 * the agent's one-shot scan as its only command. A pod kubectl leaves behind the kubelet ends here:
 * activeDeadlineSeconds, in case this process is killed before it can delete the pod.
 */
export function scanPodSpec(o: ScanPodOptions, name: string): V1Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: o.namespace, labels: { ...SCAN_POD_LABELS } },
    spec: {
      nodeName: o.node,
      restartPolicy: "Never",
      hostNetwork: true,
      hostPID: true,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      activeDeadlineSeconds: o.waitS + 60,
      terminationGracePeriodSeconds: 5,
      tolerations: [{ operator: "Exists" }],
      containers: [
        {
          name: SCAN_CONTAINER,
          image: o.image,
          imagePullPolicy: "IfNotPresent",
          args: ["scan", "--node", o.node, "--host-root", "/host", "-o", "json"],
          // The image runs as 10001; the probes read netfilter and IPVS state as root (docs/security.md).
          securityContext: { privileged: true, runAsUser: 0, runAsNonRoot: false },
          volumeMounts: [{ name: "host-root", mountPath: "/host", readOnly: true }],
        },
      ],
      volumes: [{ name: "host-root", hostPath: { path: "/" } }],
    },
  };
}

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
export function podOutcome(pod: V1Pod): Ended | null {
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

const interrupted = (signal: AbortSignal) =>
  `stopped by ${typeof signal.reason === "string" ? signal.reason : "a signal"}`;

/**
 * Waits for the pod to end by watching it (GET .../pods?watch=true&fieldSelector=metadata.name=NAME from
 * the resourceVersion it was created at, so no change is missed); a watch the server ends (its
 * timeoutSeconds) or drops is followed by a GET and a new watch. Ends on the pod ending, a stuck
 * container, the pod deleted by someone else, the wait's deadline or the caller's signal.
 */
async function waitForEnd(
  kc: KubeConfig,
  core: CoreV1Api,
  o: ScanPodOptions,
  created: V1Pod,
  signal: AbortSignal,
): Promise<Ended> {
  const name = created.metadata?.name ?? "";
  const until = Date.now() + o.waitS * 1000;
  let rv = created.metadata?.resourceVersion;
  let failures = 0;
  const first = podOutcome(created);
  if (first) return first;
  for (;;) {
    if (signal.aborted) return { ok: false, error: interrupted(signal) };
    const left = until - Date.now();
    if (left <= 0) return { ok: false, error: `the scan did not end within ${o.waitS} s (--wait-s)` };
    const round = await new Promise<Ended | { again: true; error: string | null }>((resolve) => {
      let settled = false;
      let controller: AbortController | null = null;
      const finish = (v: Ended | { again: true; error: string | null }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        controller?.abort();
        resolve(v);
      };
      const timer = setTimeout(
        () => finish({ ok: false, error: `the scan did not end within ${o.waitS} s (--wait-s)` }),
        left,
      );
      const onAbort = () => finish({ ok: false, error: interrupted(signal) });
      signal.addEventListener("abort", onAbort, { once: true });
      new Watch(kc)
        .watch(
          `/api/v1/namespaces/${encodeURIComponent(o.namespace)}/pods`,
          {
            fieldSelector: `metadata.name=${name}`,
            resourceVersion: rv,
            allowWatchBookmarks: true,
            timeoutSeconds: Math.max(1, Math.min(300, Math.ceil(left / 1000))),
          },
          (type: string, obj: V1Pod & { code?: number; message?: string }) => {
            if (type === "ERROR") return finish({ again: true, error: null }); // 410 Gone: GET, then watch anew
            if (obj?.metadata?.resourceVersion) rv = obj.metadata.resourceVersion;
            if (type === "BOOKMARK") return;
            failures = 0;
            if (type === "DELETED")
              return finish({ ok: false, error: "the scan pod was deleted by someone else before it ended" });
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
    if (!("again" in round)) return round;
    if (round.error !== null && ++failures >= 3)
      return { ok: false, error: `cannot watch pod ${o.namespace}/${name}: ${round.error}` };
    // The watch ended: where the pod is now, and the resourceVersion to watch on from.
    try {
      const now = await core.readNamespacedPod({ name, namespace: o.namespace }, deadline(o.timeoutMs));
      rv = now.metadata?.resourceVersion;
      const end = podOutcome(now);
      if (end) return end;
    } catch (e) {
      if (notFound(e))
        return { ok: false, error: "the scan pod was deleted by someone else before it ended" };
      if (++failures >= 3)
        return { ok: false, error: `cannot read pod ${o.namespace}/${name}: ${describe(e)}` };
    }
  }
}

export interface ScanPodRun {
  pod: string;
  /** The container's log (stdout and stderr as the kubelet keeps them), or why there is none. */
  log: Result<string>;
  /** What deleting the pod said: null when it is gone. */
  deleteError: string | null;
}

/**
 * Creates the scan pod on the node, waits for it, reads its log through the API (pods/log), and deletes
 * the pod whatever happened: an error, the wait's deadline, or `signal` (SIGINT/SIGTERM) mid-wait. The
 * only way to leave a pod behind is to be killed outright; then activeDeadlineSeconds ends it.
 */
export async function runScanPod(
  kc: KubeConfig,
  o: ScanPodOptions,
  signal: AbortSignal,
  onCreated: (name: string) => void = () => {},
): Promise<Result<ScanPodRun>> {
  const core = kc.makeApiClient(CoreV1Api);
  const server = redactUrls(kc.getCurrentCluster()?.server ?? "");
  try {
    await core.readNode({ name: o.node }, deadline(o.timeoutMs));
  } catch (e) {
    // Without get on nodes the check is skipped: a wrong name then ends at --wait-s, still named.
    if (notFound(e))
      return { ok: false, error: `no node ${JSON.stringify(o.node)} in the cluster at ${server}` };
  }
  if (signal.aborted) return { ok: false, error: interrupted(signal) };
  const name = scanPodName(o.node);
  let created: V1Pod;
  try {
    // Not cut short by the signal: a create the server carried out must be seen, so it can be deleted.
    created = await core.createNamespacedPod(
      { namespace: o.namespace, body: scanPodSpec(o, name) },
      deadline(o.timeoutMs),
    );
  } catch (e) {
    return {
      ok: false,
      error: `cannot create pod ${o.namespace}/${name} at ${server}: ${describe(e)} (needs create on pods in the namespace; docs/scan-node.md)`,
    };
  }
  onCreated(name);
  let log: Result<string>;
  try {
    const end = await waitForEnd(kc, core, o, created, signal);
    log = !end.ok ? end : await readLog(core, o, name, end.pod);
  } catch (e) {
    log = { ok: false, error: describe(e) };
  }
  return { ok: true, value: { pod: name, log, deleteError: await deletePod(core, o, name) } };
}

async function readLog(
  core: CoreV1Api,
  o: ScanPodOptions,
  name: string,
  pod: V1Pod,
): Promise<Result<string>> {
  let text: string;
  try {
    text = await core.readNamespacedPodLog(
      { name, namespace: o.namespace, container: SCAN_CONTAINER, limitBytes: MAX_LOG_BYTES + 1 },
      deadline(o.timeoutMs),
    );
  } catch (e) {
    return {
      ok: false,
      error: `cannot read the scan pod's log: ${describe(e)} (needs get on pods/log in the namespace; docs/scan-node.md)`,
    };
  }
  if (pod.status?.phase === "Failed")
    return { ok: false, error: `${failureOf(pod)}; its log: ${tail(text)}` };
  if (Buffer.byteLength(text) > MAX_LOG_BYTES)
    return {
      ok: false,
      error: `the scan pod's log is larger than ${MAX_LOG_BYTES} bytes: not one node report`,
    };
  return { ok: true, value: text };
}

const tail = (s: string) => JSON.stringify(s.length > 300 ? `…${s.slice(-300)}` : s || "(empty)");

async function deletePod(core: CoreV1Api, o: ScanPodOptions, name: string): Promise<string | null> {
  // Two tries: a deadline missed on a busy API server is worth one more before the pod is reported left.
  let last = "";
  for (let i = 0; i < 2; i++) {
    try {
      await core.deleteNamespacedPod(
        { name, namespace: o.namespace, gracePeriodSeconds: 5 },
        deadline(Math.max(o.timeoutMs, 10_000)),
      );
      return null;
    } catch (e) {
      if (notFound(e)) return null;
      last = describe(e);
    }
  }
  return `cannot delete pod ${o.namespace}/${name}: ${last}; delete it by hand: kubectl -n ${o.namespace} delete pod ${name}`;
}
