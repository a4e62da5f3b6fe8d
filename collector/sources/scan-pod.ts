import { CoreV1Api, KubeConfig, type V1Pod } from "@kubernetes/client-node";
import { redactUrls } from "../../common/redact.js";
import type { Result } from "../../common/result.js";
import { deadline, describe, notFound } from "./kubernetes/index.js";
import { SCAN_CONTAINER, scanPodName, scanPodSpec, type ScanPodOptions } from "./scan-pod/spec.js";
import { failureOf, interrupted, waitForEnd } from "./scan-pod/wait.js";

// `scan-node`: the agent's one-shot scan in a pod on the node (its spec in scan-pod/spec.ts, the wait
// for its end in scan-pod/wait.ts), its log read back, and the pod deleted.
export { SCAN_POD_LABELS, type ScanPodOptions } from "./scan-pod/spec.js";

/** The agent's report of a node with 10,000 Services is a few MiB; a log past this is not one report. */
const MAX_LOG_BYTES = 32 * 1024 * 1024;

interface ScanPodRun {
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
