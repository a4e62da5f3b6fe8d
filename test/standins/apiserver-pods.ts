/*
 * STAND-IN (part of test/standins/apiserver.ts): the pod writes `proxyscope scan-node` makes, and a
 * kubelet that "runs" a created pod by a script. NOT a kubelet and not the API server's pod registry:
 * no admission (Pod Security, quota), no defaulting beyond uid/resourceVersion/creationTimestamp/status,
 * no validation beyond a name and one container, no graceful deletion (a DELETE removes the pod at once
 * and answers it with metadata.deletionTimestamp set), no generateName, and the container's log is the
 * scripted text, whole (limitBytes cuts it; follow, tailLines, sinceSeconds and timestamps are ignored).
 *
 * Shapes, from kubernetes/kubernetes v1.34.4:
 * - POST /api/v1/namespaces/{ns}/pods with a core/v1 Pod: 201 and the stored Pod (kind Pod, apiVersion
 *   v1, metadata.uid, resourceVersion, creationTimestamp, namespace, status.phase Pending); a name taken
 *   is 409 AlreadyExists `pods "NAME" already exists`; a body that is not a Pod is 400 BadRequest.
 * - GET /api/v1/namespaces/{ns}/pods/{name}: the Pod; 404 NotFound `pods "NAME" not found`.
 * - GET /api/v1/namespaces/{ns}/pods?watch=true (apimachinery watch.Event lines): with resourceVersion R,
 *   every change after R (the watch cache's replay), then each change as it happens: ADDED, MODIFIED,
 *   DELETED with the whole Pod; without R (or "0"), an ADDED for each pod now, then the changes. Field and
 *   label selectors filter as on a list. The watch ends after timeoutSeconds.
 * - GET /api/v1/namespaces/{ns}/pods/{name}/log (pkg/registry/core/pod/rest/log.go): text/plain, the
 *   container's output; a container not started yet is 400 BadRequest `container "C" in pod "P" is
 *   waiting to start: ContainerCreating` (pkg/kubelet/kubelet_pods.go validateContainerLogStatus).
 * - DELETE /api/v1/namespaces/{ns}/pods/{name}: 200 and the Pod; 404 when gone.
 * - RBAC: "pods" in `forbidden` refuses every pod verb, "pods/log" the log, with the authorizer's message.
 *
 * The script, per node (`podRuns` in the cluster file): the created pod goes Running, then ends in
 * `phase` (Succeeded or Failed) with the container's exitCode and reason and `log` as its output;
 * "Running" never ends (a scan that hangs); `waiting` leaves the container waiting with that reason
 * (ErrImagePull). A pod on a node with no script stays Pending, as on a node whose kubelet is gone.
 * Every create and delete is printed on stdout as `pod-created NS/NAME` / `pod-deleted NS/NAME`:
 * what a test waits on instead of a clock.
 */
import type http from "node:http";
import { randomUUID } from "node:crypto";

export interface PodRun {
  phase: "Succeeded" | "Failed" | "Running";
  log?: string;
  exitCode?: number;
  reason?: string;
  /** A container that never starts: ErrImagePull, ImagePullBackOff, CreateContainerConfigError. */
  waiting?: string;
}

type Pod = {
  kind?: string;
  apiVersion?: string;
  metadata?: Record<string, unknown> & { name?: string; namespace?: string; resourceVersion?: string };
  spec?: { nodeName?: string; containers?: { name?: string }[] };
  status?: Record<string, unknown>;
};

interface Change {
  rv: number;
  type: "ADDED" | "MODIFIED" | "DELETED";
  pod: Pod;
}

type Send = (res: http.ServerResponse, code: number, reason: string, message: string) => void;

export class PodStore {
  private rv: number;
  private readonly history: Change[] = [];
  private readonly watchers = new Set<{ ns: string; match: (p: Pod) => boolean; res: http.ServerResponse }>();
  private readonly logs = new Map<string, string>();

  constructor(
    private readonly pods: Pod[],
    private readonly runs: Record<string, PodRun>,
    firstRv: number,
    private readonly openWatches: Set<http.ServerResponse>,
  ) {
    this.rv = firstRv;
  }

  private key = (ns: string, name: string) => `${ns}/${name}`;
  private find = (ns: string, name: string) =>
    this.pods.find((p) => p.metadata?.namespace === ns && p.metadata?.name === name);

  private change(type: Change["type"], pod: Pod) {
    this.rv += 1;
    if (type !== "DELETED") pod.metadata = { ...pod.metadata, resourceVersion: String(this.rv) };
    const snapshot = JSON.parse(JSON.stringify({ kind: "Pod", apiVersion: "v1", ...pod })) as Pod;
    this.history.push({ rv: this.rv, type, pod: snapshot });
    for (const w of this.watchers)
      if (snapshot.metadata?.namespace === w.ns && w.match(snapshot))
        w.res.write(`${JSON.stringify({ type, object: snapshot })}\n`);
  }

  create(res: http.ServerResponse, ns: string, body: string, status: Send) {
    let pod: Pod;
    try {
      pod = JSON.parse(body) as Pod;
    } catch {
      return status(res, 400, "BadRequest", "the body of the request was in an unknown format");
    }
    const name = pod?.metadata?.name;
    if (pod?.kind !== "Pod" || typeof name !== "string" || !pod.spec?.containers?.length)
      return status(
        res,
        400,
        "BadRequest",
        'Pod in version "v1" cannot be handled: not a Pod with a name and a container',
      );
    if (this.find(ns, name)) return status(res, 409, "AlreadyExists", `pods "${name}" already exists`);
    pod = {
      ...pod,
      apiVersion: "v1",
      metadata: {
        ...pod.metadata,
        namespace: ns,
        uid: randomUUID(),
        creationTimestamp: new Date().toISOString(),
      },
      status: { phase: "Pending", qosClass: "BestEffort" },
    };
    this.pods.push(pod);
    this.change("ADDED", pod);
    res.writeHead(201, { "content-type": "application/json" });
    res.end(JSON.stringify(pod));
    process.stdout.write(`pod-created ${ns}/${name}\n`);
    this.run(pod);
  }

  /** The kubelet's part, on the next turns of the loop: no test waits on a clock for it. */
  private run(pod: Pod) {
    const script = this.runs[pod.spec?.nodeName ?? ""];
    if (!script) return;
    const container = pod.spec?.containers?.[0]?.name ?? "";
    const ns = pod.metadata?.namespace ?? "";
    const name = pod.metadata?.name ?? "";
    const alive = () => this.find(ns, name) === pod;
    setImmediate(() => {
      if (!alive()) return;
      if (script.waiting) {
        pod.status = {
          phase: "Pending",
          containerStatuses: [
            {
              name: container,
              ready: false,
              restartCount: 0,
              state: { waiting: { reason: script.waiting, message: `stand-in: ${script.waiting}` } },
            },
          ],
        };
        return this.change("MODIFIED", pod);
      }
      const startedAt = new Date().toISOString();
      pod.status = {
        phase: "Running",
        startTime: startedAt,
        containerStatuses: [
          { name: container, ready: true, started: true, restartCount: 0, state: { running: { startedAt } } },
        ],
      };
      this.logs.set(this.key(ns, name), script.phase === "Running" ? (script.log ?? "") : "");
      this.change("MODIFIED", pod);
      if (script.phase === "Running") return;
      setImmediate(() => {
        if (!alive()) return;
        const exitCode = script.exitCode ?? (script.phase === "Succeeded" ? 0 : 1);
        this.logs.set(this.key(ns, name), script.log ?? "");
        pod.status = {
          phase: script.phase,
          startTime: startedAt,
          containerStatuses: [
            {
              name: container,
              ready: false,
              started: false,
              restartCount: 0,
              state: {
                terminated: {
                  exitCode,
                  reason: script.reason ?? (exitCode === 0 ? "Completed" : "Error"),
                  startedAt,
                  finishedAt: new Date().toISOString(),
                },
              },
            },
          ],
        };
        this.change("MODIFIED", pod);
      });
    });
  }

  get(res: http.ServerResponse, ns: string, name: string, status: Send) {
    const pod = this.find(ns, name);
    if (!pod) return status(res, 404, "NotFound", `pods "${name}" not found`);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ kind: "Pod", ...pod }));
  }

  log(res: http.ServerResponse, ns: string, name: string, q: URLSearchParams, status: Send) {
    const pod = this.find(ns, name);
    if (!pod) return status(res, 404, "NotFound", `pods "${name}" not found`);
    const container = q.get("container") ?? pod.spec?.containers?.[0]?.name ?? "";
    if (!pod.spec?.containers?.some((c) => c.name === container))
      return status(res, 400, "BadRequest", `container ${container} is not valid for pod ${name}`);
    const text = this.logs.get(this.key(ns, name));
    if (text === undefined)
      return status(
        res,
        400,
        "BadRequest",
        `container "${container}" in pod "${name}" is waiting to start: ContainerCreating`,
      );
    const limit = Number(q.get("limitBytes") ?? 0);
    const body = Buffer.from(text);
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(limit > 0 ? body.subarray(0, limit) : body);
  }

  delete(res: http.ServerResponse, ns: string, name: string, status: Send) {
    const pod = this.find(ns, name);
    if (!pod) return status(res, 404, "NotFound", `pods "${name}" not found`);
    this.pods.splice(this.pods.indexOf(pod), 1);
    this.logs.delete(this.key(ns, name));
    pod.metadata = {
      ...pod.metadata,
      deletionTimestamp: new Date().toISOString(),
      deletionGracePeriodSeconds: 0,
    };
    this.change("DELETED", pod);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ kind: "Pod", ...pod }));
    process.stdout.write(`pod-deleted ${ns}/${name}\n`);
  }

  watch(res: http.ServerResponse, ns: string, q: URLSearchParams, match: (p: Pod) => boolean) {
    res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
    res.flushHeaders();
    this.openWatches.add(res);
    const from = q.get("resourceVersion");
    const send = (type: string, pod: Pod) => res.write(`${JSON.stringify({ type, object: pod })}\n`);
    if (from && from !== "0") {
      for (const c of this.history)
        if (c.rv > Number(from) && c.pod.metadata?.namespace === ns && match(c.pod)) send(c.type, c.pod);
    } else {
      for (const p of this.pods)
        if (p.metadata?.namespace === ns && match(p)) send("ADDED", { kind: "Pod", ...p });
    }
    const w = { ns, match, res };
    this.watchers.add(w);
    const timeout = Number(q.get("timeoutSeconds") ?? 0);
    const end = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    res.on("close", () => {
      this.watchers.delete(w);
      this.openWatches.delete(res);
      clearTimeout(end);
    });
  }
}
