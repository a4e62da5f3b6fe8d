/*
 * STAND-IN for the Kubernetes API server. This is NOT an API server: no storage, no admission, no
 * RBAC beyond one bearer token, JSON only (no protobuf), no writes except that Events are accepted and
 * dropped and pods are created and deleted (apiserver-pods.ts, with a scripted kubelet: the pods of
 * `proxyscope scan-node`), no discovery (/api, /apis), no server-side apply, no PATCH or UPDATE, and
 * no other object changes while it runs (their watches see the initial state and bookmarks, never a
 * MODIFIED or DELETED; a pod watch sees its pods' changes). It serves the read paths
 * the collector uses and those the REAL kube-proxy's informers use, with objects in their real JSON
 * shapes, so the official @kubernetes/client-node and client-go can talk to it through an ordinary
 * kubeconfig pointing at loopback.
 *
 * Shapes, from kubernetes/kubernetes:
 * - Node, Service, Pod, ConfigMap, DaemonSet: staging/src/k8s.io/api/core/v1/types.go and apps/v1,
 *   as published in api/openapi-spec; the objects themselves come from test/fixtures/kubernetes/.
 * - List envelopes: {kind: "NodeList", apiVersion: "v1", metadata: {resourceVersion, continue}, items}
 *   with limit/continue paging (apimachinery ListMeta).
 * - Errors: metav1.Status {kind: "Status", status: "Failure", reason: NotFound|Forbidden|Unauthorized, code}.
 * - /version: version.Info {major, minor, gitVersion, ...}.
 * - DaemonSetList at /apis/apps/v1/daemonsets (every namespace, limit/continue paging).
 * - EndpointSlice (discovery.k8s.io/v1, kubernetes/api discovery/v1/types.go): addressType, endpoints[]
 *   {addresses, conditions {ready, serving, terminating}, nodeName, zone, hints}, ports[] {name, protocol,
 *   port}, label kubernetes.io/service-name; listed at /apis/discovery.k8s.io/v1/endpointslices and
 *   /apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices as an EndpointSliceList, with the
 *   set-based selector `key in (a,b)` (apimachinery labels.Parse) as well as `key=value`. A 403 on
 *   them is the authorizer's message for a list (apiserver responsewriters forbiddenMessage: "at the
 *   cluster scope" or "in the namespace").
 * - The pod proxy subresource, GET /api/v1/namespaces/{ns}/pods/{[scheme:]name[:port]}/proxy/{path}?query,
 *   as pkg/registry/core/pod/strategy.go ResourceLocation and rest/subresources.go ProxyREST build it:
 *   an id SplitSchemeNamePort refuses is 400 `invalid pod request "<id>"`; no such pod 404; no port: the
 *   first container port; a pod IP that is not global unicast (loopback, link-local, unset) is 400
 *   BadRequest "address not allowed"; the query is passed on; the agent's own status and body come back
 *   as they are; a dial that fails is apimachinery's proxy transport (pkg/util/proxy/transport.go)
 *   errors.NewServiceUnavailable("error trying to reach service: " + err), 503, with Go's net error text
 *   ("dial tcp 198.51.100.11:9977: connect: connection refused"). RBAC: "pods/proxy" in `forbidden`
 *   is 403 with the authorizer's message.
 *   The API server reaches the pod network and the collector does not: `podNetwork` maps each pod IP to
 *   the loopback address where the test runs that agent; an unmapped pod IP has no route.
 *
 * - What kube-proxy asks (cmd/kube-proxy/app/server.go and pkg/proxy/node.go, v1.31-v1.37): a GET of
 *   its own Node (/api/v1/nodes/NAME, before v1.33), list+watch
 *   of Services (labelSelector `!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless`,
 *   fieldSelector `spec.clusterIP!=None`), EndpointSlices (the same labels), its own Node
 *   (fieldSelector `metadata.name=<hostname>`), and from v1.33, where MultiCIDRServiceAllocator is on by
 *   default, networking.k8s.io/v1 ServiceCIDRs; it POSTs Events (events.k8s.io/v1, core/v1).
 * - Watch (?watch=true; apimachinery pkg/watch and endpoints/handlers/watch.go): newline-delimited JSON
 *   watch.Event {type, object}, object with its kind and apiVersion. ?resourceVersion=R (not "0"): no
 *   event until something changes (here: never), only BOOKMARKs when allowWatchBookmarks=true, each a
 *   bare object of the kind with metadata.resourceVersion. ?sendInitialEvents=true (client-go's
 *   WatchList, reflector.go watchList): an ADDED per object, then a BOOKMARK annotated
 *   "k8s.io/initial-events-end": "true", as the API server with WatchList on answers it. The watch ends
 *   after timeoutSeconds, as the server's does, and when the stand-in stops (its last chunk
 *   sent, not cut); client-go then watches again.
 * - Field selectors: `path=value`, `path==value`, `path!=value` terms on the object's dotted path;
 *   label selectors also `!key`, `key` and `key!=value` (apimachinery labels.Parse).
 *
 * Usage: node dist/test/standins/apiserver.js CLUSTER.json
 * CLUSTER.json: { token (null: anonymous), version, nodes, configMaps, daemonSets, services, pods, endpointSlices?, serviceCIDRs?,
 *   podNetwork?, forbidden?: string[], listen?: "127.0.0.1:0",
 *   faults?: { RESOURCE: STATUS | "hang" } } where RESOURCE is nodes, pods, services, daemonsets (a named
 *   one), daemonsets:list (the list of all), endpointslices,
 *   configmaps/NAME or version: that read answers a metav1.Status with that code, or never answers.
 *   podRuns?: { NODE: { phase: Succeeded|Failed|Running, log?, exitCode?, reason?, waiting? } } (apiserver-pods.ts).
 * Prints "ready <port>" once listening on 127.0.0.1, then "pod-created NS/NAME" and "pod-deleted NS/NAME"
 * as pods come and go; exits on SIGTERM/SIGINT.
 */
import http from "node:http";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { PodStore, type PodRun } from "./apiserver-pods.js";

interface Obj {
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    resourceVersion?: string;
  };
  spec?: { nodeName?: string; containers?: { name?: string; ports?: { containerPort?: number }[] }[] };
  status?: { podIP?: string; podIPs?: { ip: string }[] };
}

interface Cluster {
  /**
   * The one bearer token it takes; null: anonymous requests are served, as by an API server that
   * authorizes system:anonymous. client-go sends no credentials to an http:// server (clientcmd
   * client_config.go: "only try to read the auth information if we are secure"), and the real
   * kube-proxy is run against this stand-in over plain http.
   */
  token: string | null;
  version: Record<string, string>;
  nodes: Obj[];
  configMaps: Obj[];
  daemonSets: Obj[];
  services: Obj[];
  pods: Obj[];
  endpointSlices?: Obj[];
  /** networking.k8s.io/v1 ServiceCIDRs (kube-proxy v1.33+ watches them). */
  serviceCIDRs?: Obj[];
  /** host:port to listen on (default 127.0.0.1:0, any free port). */
  listen?: string;
  /** Pod IP -> the loopback address that stands for it: the pod network only the API server reaches. */
  podNetwork?: Record<string, string>;
  /** Resource names answered with 403 Forbidden (e.g. "services"), as a tight RBAC role would. */
  forbidden?: string[];
  /** Per resource: answer this HTTP status (as metav1.Status), or "hang" (accept, never answer). */
  faults?: Record<string, number | "hang">;
  /** Per node: what a pod created on it does (apiserver-pods.ts); no entry: it stays Pending. */
  podRuns?: Record<string, PodRun>;
}

const REASONS: Record<number, string> = {
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
};

const cluster = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as Cluster;

function status(res: http.ServerResponse, code: number, reason: string, message: string) {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message,
      reason,
      code,
    }),
  );
}

/** Go's net.IP.IsGlobalUnicast: not unspecified, loopback, multicast, link-local or the broadcast address. */
function globalUnicast(ip: string): boolean {
  if (isIP(ip) === 4) {
    const [a, b] = ip.split(".").map(Number) as [number, number];
    return !(
      ip === "0.0.0.0" ||
      ip === "255.255.255.255" ||
      a === 127 ||
      a >= 224 ||
      (a === 169 && b === 254)
    );
  }
  if (isIP(ip) === 6) {
    const l = ip.toLowerCase();
    return !(l === "::" || l === "::1" || l.startsWith("ff") || /^fe[89ab]/.test(l));
  }
  return false;
}

/** apimachinery util/net SplitSchemeNamePort: "name", "name:port" or "scheme:name:port". */
function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | null {
  const parts = id.split(":");
  const [a, b, c] = parts;
  if (parts.length === 1) return a ? { scheme: "", name: a, port: "" } : null;
  if (parts.length === 2) return a ? { scheme: "", name: a, port: b! } : null;
  if (parts.length === 3 && (a === "http" || a === "https") && b) return { scheme: a, name: b, port: c! };
  return null;
}

function proxy(
  res: http.ServerResponse,
  ns: string,
  id: string,
  rest: string,
  query: string,
  deny: (r: string, verb: string, name: string, ns: string) => boolean,
) {
  const split = splitSchemeNamePort(id);
  if (!split) return status(res, 400, "BadRequest", `invalid pod request "${id}"`);
  if (deny("pods/proxy", "get", split.name, ns)) return;
  const pod = byName(cluster.pods, ns, split.name);
  if (!pod) return status(res, 404, "NotFound", `pods "${split.name}" not found`);
  const port =
    split.port || String(pod.spec?.containers?.flatMap((c) => c.ports ?? [])[0]?.containerPort ?? "");
  const podIP = pod.status?.podIPs?.[0]?.ip ?? "";
  if (!globalUnicast(podIP)) return status(res, 400, "BadRequest", "address not allowed");
  const hostPort = `${podIP.includes(":") ? `[${podIP}]` : podIP}:${port || 80}`;
  const unreachable = (why: string) =>
    status(res, 503, "ServiceUnavailable", `error trying to reach service: dial tcp ${hostPort}: ${why}`);
  const via = cluster.podNetwork?.[podIP];
  if (via === undefined) return unreachable("connect: no route to host");
  const up = http.get(
    { host: via, port: Number(port || 80), path: `/${rest}${query}`, headers: { accept: "*/*" } },
    (answer) => {
      const ct = answer.headers["content-type"];
      res.writeHead(answer.statusCode ?? 502, ct ? { "content-type": ct } : {});
      answer.pipe(res);
    },
  );
  up.on("error", (e: NodeJS.ErrnoException) =>
    res.headersSent
      ? res.destroy()
      : unreachable(
          e.code === "ECONNREFUSED" ? "connect: connection refused" : `connect: ${e.code ?? e.message}`,
        ),
  );
  // The collector gave up (its deadline): the API server's request context ends the backend call too.
  res.on("close", () => up.destroy());
}

function send(res: http.ServerResponse, body: unknown) {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** `a=b,c=d`, `key in (x,y)`, `!key`, `key`, `key!=v` terms (apimachinery labels.Parse). */
function matches(sel: string | null, labels: Record<string, string> = {}): boolean {
  if (!sel) return true;
  const terms = sel.match(/[^,(]+\([^)]*\)|[^,]+/g) ?? [];
  return terms.every((term) => {
    const t = term.trim();
    if (t.startsWith("!")) return labels[t.slice(1)] === undefined;
    if (t.includes("!=")) {
      const [k, v] = t.split("!=");
      return labels[k!] !== v;
    }
    if (!t.includes("=") && !/\s+in\s+/.test(t)) return labels[t] !== undefined;
    const set = /^\s*([^\s]+)\s+in\s+\(([^)]*)\)\s*$/.exec(term);
    if (set) {
      const v = labels[set[1]!];
      return (
        v !== undefined &&
        set[2]!
          .split(",")
          .map((x) => x.trim())
          .includes(v)
      );
    }
    const [k, v] = term.split("=");
    return k !== undefined && labels[k] === v;
  });
}

/** `path=v`, `path==v`, `path!=v` terms on dotted object paths (apimachinery fields.ParseSelector). */
function fieldsMatch(sel: string | null, o: Obj): boolean {
  if (!sel) return true;
  return sel.split(",").every((term) => {
    const m = /^([\w.]+)(!=|==|=)(.*)$/.exec(term.trim());
    if (!m) return false;
    let v: unknown = o;
    for (const k of m[1]!.split(".")) v = (v as Record<string, unknown> | undefined)?.[k];
    const got = typeof v === "string" ? v : v === undefined ? "" : String(v);
    return m[2] === "!=" ? got !== m[3] : got === m[3];
  });
}

const RESOURCE_VERSION = "4711";

/** The watches being served: ended, not cut, when the stand-in stops (see stop below). */
const openWatches = new Set<http.ServerResponse>();

/** A watch: the events client-go's reflector reads (see the header), until timeoutSeconds or the client goes. */
function watch(res: http.ServerResponse, kind: string, apiVersion: string, items: Obj[], q: URLSearchParams) {
  const one = kind.replace(/List$/, "");
  res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
  // The API server sends the head at once (watch.go HandleHTTP: WriteHeader, then flusher.Flush()):
  // client-go's watch is established on the status, not on a first event that may never come.
  res.flushHeaders();
  openWatches.add(res);
  const event = (type: string, object: object) => res.write(`${JSON.stringify({ type, object })}\n`);
  const bookmark = (annotations?: Record<string, string>) =>
    event("BOOKMARK", {
      kind: one,
      apiVersion,
      metadata: { resourceVersion: RESOURCE_VERSION, ...(annotations ? { annotations } : {}) },
    });
  const bookmarks = q.get("allowWatchBookmarks") === "true";
  if (q.get("sendInitialEvents") === "true") {
    for (const o of items) event("ADDED", { kind: one, apiVersion, ...o });
    bookmark({ "k8s.io/initial-events-end": "true" });
  }
  // The API server sends a bookmark about once a minute (cacher's bookmark timer); sooner here is harmless.
  const timer = bookmarks ? setInterval(() => bookmark(), 30_000) : undefined;
  const timeout = Number(q.get("timeoutSeconds") ?? 0);
  const end = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
  res.on("close", () => {
    openWatches.delete(res);
    clearInterval(timer);
    clearTimeout(end);
  });
}

function list(res: http.ServerResponse, kind: string, apiVersion: string, items: Obj[], q: URLSearchParams) {
  const sel = q.get("labelSelector");
  const fsel = q.get("fieldSelector");
  const all = items.filter((o) => matches(sel, o.metadata?.labels) && fieldsMatch(fsel, o));
  if (q.get("watch") === "true" || q.get("watch") === "1") return watch(res, kind, apiVersion, all, q);
  const limit = Number(q.get("limit") ?? 0);
  const start = Number(q.get("continue") ?? 0);
  const page = limit > 0 ? all.slice(start, start + limit) : all;
  const next = limit > 0 && start + limit < all.length ? String(start + limit) : undefined;
  send(res, {
    kind,
    apiVersion,
    metadata: { resourceVersion: RESOURCE_VERSION, ...(next ? { continue: next } : {}) },
    items: page,
  });
}

const podStore = new PodStore(cluster.pods, cluster.podRuns ?? {}, Number(RESOURCE_VERSION), openWatches);

const byName = (items: Obj[], ns: string, name: string) =>
  items.find((o) => o.metadata?.namespace === ns && o.metadata?.name === name);

const server = http.createServer((req, res) => {
  if (cluster.token !== null && req.headers.authorization !== `Bearer ${cluster.token}`)
    return status(res, 401, "Unauthorized", "Unauthorized");
  const url = new URL(req.url ?? "/", "http://stand-in");
  const p = url.pathname;
  // kube-proxy's event recorder (birth cry, node events): accepted as created, then dropped.
  if (req.method === "POST" && /^\/(api\/v1|apis\/events\.k8s\.io\/v1)\/namespaces\/[^/]+\/events$/.test(p)) {
    const body: Buffer[] = [];
    req.on("data", (d: Buffer) => body.push(d));
    req.on("end", () => {
      res.writeHead(201, { "content-type": "application/json" });
      res.end(Buffer.concat(body));
    });
    return;
  }
  const q = url.searchParams;
  let m: RegExpExecArray | null;
  const deny = (resource: string) => {
    if (!cluster.forbidden?.includes(resource)) return false;
    status(
      res,
      403,
      "Forbidden",
      `${resource} is forbidden: User "proxyscope" cannot list resource "${resource}"`,
    );
    return true;
  };
  const fault = (resource: string) => {
    const f = cluster.faults?.[resource];
    if (f === undefined) return false;
    if (f !== "hang") status(res, f, REASONS[f] ?? "Unknown", `stand-in fault: ${resource} answers ${f}`);
    return true;
  };
  // pods/proxy: the authorizer's answer names the verb, the subresource and the namespace.
  const denyProxy = (r: string, verb: string, name: string, ns: string) => {
    if (!cluster.forbidden?.includes(r)) return false;
    status(
      res,
      403,
      "Forbidden",
      `pods${name ? ` "${name}"` : ""} is forbidden: User "proxyscope" cannot ${verb} resource "${r}" in API group "" in the namespace "${ns}"`,
    );
    return true;
  };
  // Pod writes, one pod, its log and pod watches (apiserver-pods.ts).
  if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/pods(?:\/([^/]+)(\/log)?)?$/.exec(p))) {
    const ns = decodeURIComponent(m[1]!);
    const name = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
    const verb =
      req.method === "POST"
        ? "create"
        : req.method === "DELETE"
          ? "delete"
          : q.get("watch") === "true"
            ? "watch"
            : name
              ? "get"
              : "list";
    const r = m[3] ? "pods/log" : "pods";
    if (verb !== "list" && denyProxy(r, verb, name ?? "", ns)) return;
    if (req.method === "POST" && name === undefined) {
      const body: Buffer[] = [];
      req.on("data", (d: Buffer) => body.push(d));
      req.on("end", () => podStore.create(res, ns, Buffer.concat(body).toString(), status));
      return;
    }
    if (req.method === "DELETE" && name !== undefined && !m[3]) return podStore.delete(res, ns, name, status);
    if (req.method === "GET" && name !== undefined)
      return m[3] ? podStore.log(res, ns, name, q, status) : podStore.get(res, ns, name, status);
    if (req.method === "GET" && verb === "watch")
      return podStore.watch(
        res,
        ns,
        q,
        (o) =>
          matches(q.get("labelSelector"), o.metadata?.labels as Record<string, string>) &&
          fieldsMatch(q.get("fieldSelector"), o as Obj),
      );
  }
  if (req.method !== "GET")
    return status(res, 405, "MethodNotAllowed", "the stand-in only reads and writes pods");
  if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/proxy(?:\/(.*))?$/.exec(p)))
    return proxy(
      res,
      decodeURIComponent(m[1]!),
      decodeURIComponent(m[2]!),
      m[3] ?? "",
      url.search,
      denyProxy,
    );
  if ((m = /^\/apis\/discovery\.k8s\.io\/v1\/(?:namespaces\/([^/]+)\/)?endpointslices$/.exec(p))) {
    if (fault("endpointslices")) return;
    const ns = m[1] === undefined ? null : decodeURIComponent(m[1]);
    if (cluster.forbidden?.includes("endpointslices"))
      return status(
        res,
        403,
        "Forbidden",
        `endpointslices.discovery.k8s.io is forbidden: User "system:serviceaccount:proxyscope:proxyscope-collector" cannot list resource "endpointslices" in API group "discovery.k8s.io" ${ns === null ? "at the cluster scope" : `in the namespace "${ns}"`}`,
      );
    const items = (cluster.endpointSlices ?? []).filter((o) => ns === null || o.metadata?.namespace === ns);
    return list(res, "EndpointSliceList", "discovery.k8s.io/v1", items, q);
  }
  if (p === "/apis/networking.k8s.io/v1/servicecidrs")
    return (
      fault("servicecidrs") ||
      list(res, "ServiceCIDRList", "networking.k8s.io/v1", cluster.serviceCIDRs ?? [], q)
    );
  const resource =
    p === "/version"
      ? "version"
      : p === "/api/v1/nodes"
        ? "nodes"
        : p === "/api/v1/services"
          ? "services"
          : /\/pods$/.test(p)
            ? "pods"
            : p === "/apis/apps/v1/daemonsets"
              ? "daemonsets:list"
              : /\/daemonsets\//.test(p)
                ? "daemonsets"
                : `configmaps/${/\/configmaps\/([^/]+)$/.exec(p)?.[1] ?? ""}`;
  if (fault(resource)) return;
  if (p === "/version") return send(res, cluster.version);
  if (p === "/api/v1/nodes") return deny("nodes") || list(res, "NodeList", "v1", cluster.nodes, q);
  // kube-proxy before v1.33 GETs its own Node (cmd/kube-proxy/app/server.go getNodeIPs) before any informer.
  if ((m = /^\/api\/v1\/nodes\/([^/]+)$/.exec(p))) {
    if (deny("nodes")) return;
    const o = cluster.nodes.find((n) => n.metadata?.name === decodeURIComponent(m![1]!));
    return o
      ? send(res, { kind: "Node", apiVersion: "v1", ...o })
      : status(res, 404, "NotFound", `nodes "${decodeURIComponent(m[1]!)}" not found`);
  }
  if (p === "/api/v1/services")
    return deny("services") || list(res, "ServiceList", "v1", cluster.services, q);
  if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/pods$/.exec(p)))
    return (
      deny("pods") ||
      list(
        res,
        "PodList",
        "v1",
        cluster.pods.filter((o) => o.metadata?.namespace === m![1]),
        q,
      )
    );
  if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/(configmaps|services)\/([^/]+)$/.exec(p))) {
    if (deny(m[2]!)) return;
    const o = byName(m[2] === "configmaps" ? cluster.configMaps : cluster.services, m[1]!, m[3]!);
    return o ? send(res, o) : status(res, 404, "NotFound", `${m[2]} "${m[3]}" not found`);
  }
  // Every DaemonSet, all namespaces, paged: a DaemonSetList (apps/v1). "daemonsets:list" in `forbidden`
  // denies only this cluster-wide list, as a Role that grants get on kube-proxy alone would.
  if (p === "/apis/apps/v1/daemonsets") {
    if (cluster.forbidden?.includes("daemonsets:list"))
      return status(
        res,
        403,
        "Forbidden",
        'daemonsets.apps is forbidden: User "system:serviceaccount:proxyscope:proxyscope-collector" cannot list resource "daemonsets" in API group "apps" at the cluster scope',
      );
    return deny("daemonsets") || list(res, "DaemonSetList", "apps/v1", cluster.daemonSets, q);
  }
  if ((m = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/daemonsets\/([^/]+)$/.exec(p))) {
    if (deny("daemonsets")) return;
    const o = byName(cluster.daemonSets, m[1]!, m[2]!);
    return o ? send(res, o) : status(res, 404, "NotFound", `daemonsets.apps "${m[2]}" not found`);
  }
  return status(res, 404, "NotFound", "the server could not find the requested resource");
});

const [listenHost, listenPort] = (() => {
  const l = cluster.listen ?? "127.0.0.1:0";
  const i = l.lastIndexOf(":");
  return [l.slice(0, i).replace(/^\[|\]$/g, ""), Number(l.slice(i + 1))] as const;
})();
server.listen(listenPort, listenHost, () => {
  const a = server.address();
  process.stdout.write(`ready ${typeof a === "object" && a ? a.port : 0}\n`);
});
// A watch is ended as a shutting-down API server ends it (the stream's last chunk, so client-go sees
// the watch close and not a broken connection); then a "hang" fault's connections, which would hold
// close() for ever, are cut.
const stop = () => {
  const ended = [...openWatches].map((res) => new Promise<void>((done) => res.end(done)));
  server.close(() => process.exit(0));
  void Promise.all(ended).then(() => server.closeAllConnections());
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
