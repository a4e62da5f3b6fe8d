import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  DiscoveryV1Api,
  KubeConfig,
  VersionApi,
  type ConfigurationOptions,
  Observable,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
  type V1ConfigMap,
  type V1DaemonSet,
  type V1EndpointSlice,
  type V1Node,
  type V1Pod,
  type V1Service,
} from "@kubernetes/client-node";
import { existsSync } from "node:fs";
import type http from "node:http";
import type https from "node:https";
import { httpGetVia, type Getter, type Via } from "../../common/http.js";
import { redactUrls } from "../../common/redact.js";
import type { AgentTarget } from "./agents.js";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import {
  configMountOf,
  flagValue,
  parseFeatureGatesFlag,
  parseKubeProxyConfig,
  parseKubeVersion,
} from "../parse/kube-proxy-config.js";
import { DAEMONSETS_GAP } from "../report/cluster-facts.js";
import type {
  ApiDaemonSet,
  ApiEndpointSlice,
  ApiNode,
  ApiService,
  ClusterFacts,
  DaemonSetList,
  KubeProxyConfigMap,
  KubeProxyDaemonSet,
  MirrorPod,
  SliceReads,
  StaticKubeProxy,
} from "../report/cluster-facts.js";
import type { Result } from "../../common/result.js";

export interface KubeOptions {
  timeoutMs: number;
  /** Where kube-proxy's ConfigMap and DaemonSet live. */
  kubeProxyNamespace: string;
}

/** Which kubeconfig to load, as kubectl takes it: --kubeconfig, --context, then $KUBECONFIG. */
export interface KubeSource {
  kubeconfig: string | null;
  context: string | null;
}

export interface Kube {
  kc: KubeConfig;
  /** Loaded from the pod's service account: the collector runs in the cluster, beside the agents. */
  inCluster: boolean;
}

const SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/**
 * Loads the client config the way kubectl does: --kubeconfig, else every file in $KUBECONFIG, else
 * ~/.kube/config, else the pod's service account; then --context. Never throws; with nothing to load
 * it says where it looked (the client's own fallback is a localhost:8080 it then refuses to speak to).
 */
export function loadKubeConfig(
  src: KubeSource,
  env: NodeJS.ProcessEnv = process.env,
  home: string = homedir(),
): Result<Kube> {
  const kc = new KubeConfig();
  let inCluster = false;
  const looked: string[] = [];
  try {
    const files = (env.KUBECONFIG ?? "").split(delimiter).filter(Boolean);
    const homeConfig = join(home, ".kube", "config");
    if (src.kubeconfig) kc.loadFromFile(src.kubeconfig);
    else if (files.length > 0) kc.loadFromDefault();
    else if (existsSync(homeConfig)) kc.loadFromFile(homeConfig);
    else if (env.KUBERNETES_SERVICE_HOST && existsSync(SERVICE_ACCOUNT_TOKEN)) {
      kc.loadFromCluster();
      inCluster = true;
    } else {
      looked.push(
        "--kubeconfig (not given)",
        "$KUBECONFIG (not set)",
        `${homeConfig} (no such file)`,
        `the in-cluster service account (${env.KUBERNETES_SERVICE_HOST ? `${SERVICE_ACCOUNT_TOKEN}: no such file` : "KUBERNETES_SERVICE_HOST not set: not in a pod"})`,
      );
      return { ok: false, error: `no kubeconfig found; looked at ${looked.join(", ")}` };
    }
    if (src.context !== null) {
      const names = kc.getContexts().map((c) => c.name);
      if (!names.includes(src.context))
        return {
          ok: false,
          error: `no context ${JSON.stringify(src.context.slice(0, 100))} in the kubeconfig (it has: ${names.slice(0, 10).join(", ") || "none"})`,
        };
      kc.setCurrentContext(src.context);
    }
    const cluster = kc.getCurrentCluster();
    if (!cluster)
      return {
        ok: false,
        error: "kubeconfig names no current cluster (set current-context or pass --context)",
      };
    if (cluster.server.startsWith("http:") && !cluster.skipTLSVerify)
      return {
        ok: false,
        error: `cluster ${JSON.stringify(cluster.name)} is plain http (${redactUrls(cluster.server)}): the client speaks http only with insecure-skip-tls-verify: true`,
      };
    return { ok: true, value: { kc, inCluster } };
  } catch (e) {
    return {
      ok: false,
      error: `cannot load kubeconfig: ${redactUrls((e as Error).message.split("\n")[0] ?? "")}`,
    };
  }
}

// Every API call carries a deadline: the client hands the request's signal to its fetch.
export function deadline(timeoutMs: number): ConfigurationOptions {
  const withDeadline: ObservableMiddleware = {
    pre: (ctx: RequestContext) => {
      ctx.setSignal(AbortSignal.timeout(timeoutMs));
      return new Observable(Promise.resolve(ctx));
    },
    post: (r: ResponseContext) => new Observable(Promise.resolve(r)),
  };
  return { middleware: [withDeadline], middlewareMergeStrategy: "append" };
}

export const notFound = (e: unknown) => e instanceof ApiException && e.code === 404;

// The client's errors quote the request's URL, and so the kubeconfig server's password if it has one.
export function describe(e: unknown): string {
  return redactUrls(describeRaw(e));
}

/**
 * metav1.Status's message, whole: an authorizer's 403 quotes the user and the resource, and a cut at
 * the first escaped quote lost the permission it names.
 */
function statusMessage(body: string): string {
  let msg: unknown;
  try {
    msg = (JSON.parse(body) as { message?: unknown } | null)?.message;
  } catch {
    msg = /"message":"([^"]*)"/.exec(body)?.[1];
  }
  return typeof msg === "string" && msg !== "" ? `: ${msg.slice(0, 300)}` : "";
}

function describeRaw(e: unknown): string {
  if (e instanceof ApiException) {
    const body = typeof e.body === "string" ? e.body : JSON.stringify(e.body);
    return `HTTP ${e.code}${statusMessage(body ?? "")}`;
  }
  const err = e as { name?: string; message?: string; cause?: { code?: string } };
  if (err?.name === "AbortError" || err?.name === "TimeoutError") return "timed out";
  return err?.cause?.code ?? err?.message ?? String(e);
}

// Pages bound each response: a 5,000-node list never arrives as one body.
const PAGE = 500;

async function listAll<T>(
  page: (cont: string | undefined) => Promise<{ items: T[]; metadata?: { _continue?: string } }>,
): Promise<T[]> {
  const out: T[] = [];
  let cont: string | undefined;
  do {
    const res = await page(cont);
    out.push(...res.items);
    cont = res.metadata?._continue || undefined;
  } while (cont);
  return out;
}

export function toApiNode(n: V1Node): ApiNode {
  const info = n.status?.nodeInfo;
  const ready = n.status?.conditions?.find((c) => c?.type === "Ready");
  return {
    name: n.metadata?.name ?? "",
    kubeletVersion: info?.kubeletVersion ?? null,
    kernelVersion: info?.kernelVersion ?? null,
    osImage: info?.osImage ?? null,
    addresses: (n.status?.addresses ?? []).flatMap((a) => (a ? [{ type: a.type, address: a.address }] : [])),
    labels: { ...(n.metadata?.labels ?? {}) },
    ready: ready ? ready.status === "True" : null,
    unschedulable: n.spec?.unschedulable === true,
    providerID: n.spec?.providerID ?? null,
  };
}

export function toApiService(s: V1Service): ApiService {
  return {
    namespace: s.metadata?.namespace ?? "",
    name: s.metadata?.name ?? "",
    type: s.spec?.type ?? "ClusterIP",
    clusterIPs: s.spec?.clusterIPs ?? (s.spec?.clusterIP ? [s.spec.clusterIP] : []),
    ports: (s.spec?.ports ?? []).flatMap((p) =>
      p
        ? [
            {
              name: p.name ?? null,
              protocol: p.protocol ?? "TCP",
              port: p.port,
              nodePort: p.nodePort ?? null,
            },
          ]
        : [],
    ),
    sessionAffinity: s.spec?.sessionAffinity ?? null,
    internalTrafficPolicy: s.spec?.internalTrafficPolicy ?? null,
    externalTrafficPolicy: s.spec?.externalTrafficPolicy ?? null,
    externalIPs: (s.spec?.externalIPs ?? []).filter((a) => typeof a === "string"),
    loadBalancerIPs: (s.status?.loadBalancer?.ingress ?? []).flatMap((i) =>
      typeof i?.ip === "string" ? [i.ip] : [],
    ),
    healthCheckNodePort: s.spec?.healthCheckNodePort ?? null,
  };
}

// kubeadm's key is config.conf; other installers use config.yaml or kube-proxy-config.yaml.
const CONFIG_KEYS = ["config.conf", "config.yaml", "kube-proxy-config.yaml", "config"];

/**
 * kube-proxy's configuration out of a ConfigMap: under `mountedKey` when the DaemonSet's --config was
 * followed to it, else under the first conventional key.
 */
export function toKubeProxyConfigMap(cm: V1ConfigMap, mountedKey: string | null = null): KubeProxyConfigMap {
  const data = cm.data ?? {};
  const name = cm.metadata?.name ?? "kube-proxy";
  const via = mountedKey === null ? ("default-name" as const) : ("daemonset-mount" as const);
  const key = mountedKey ?? CONFIG_KEYS.find((k) => k in data) ?? null;
  if (key === null || !(key in data))
    return {
      name,
      key: null,
      via,
      config: null,
      parseError:
        mountedKey === null
          ? `no ${CONFIG_KEYS.join("/")} key`
          : `no key ${mountedKey}, which --config reads`,
    };
  const parsed = parseKubeProxyConfig(data[key] ?? "");
  return {
    name,
    key,
    via,
    config: parsed.ok ? parsed.value : null,
    parseError: parsed.ok ? null : parsed.error,
  };
}

export function toKubeProxyDaemonSet(ds: V1DaemonSet): KubeProxyDaemonSet {
  const containers = ds.spec?.template?.spec?.containers ?? [];
  const c = containers.find((x) => x?.name === "kube-proxy") ?? containers[0];
  const argv = [...(c?.command ?? []), ...(c?.args ?? [])].filter((x) => typeof x === "string");
  const gates = flagValue(argv, "feature-gates");
  const configFlag = flagValue(argv, "config");
  const pod = ds.spec?.template?.spec;
  return {
    name: ds.metadata?.name ?? "kube-proxy",
    image: c?.image ?? null,
    argv,
    proxyModeFlag: flagValue(argv, "proxy-mode"),
    featureGatesFlag: gates === null ? null : parseFeatureGatesFlag(gates),
    configFlag,
    updateStrategy: ds.spec?.updateStrategy?.type ?? "RollingUpdate",
    maxUnavailable: ds.spec?.updateStrategy?.rollingUpdate?.maxUnavailable ?? null,
    configMapVolumes: (ds.spec?.template?.spec?.volumes ?? []).flatMap((v) =>
      v?.configMap?.name ? [v.configMap.name] : [],
    ),
    labels: stringLabels(ds.metadata?.labels),
    configMount:
      configFlag === null ? null : configMountOf(configFlag, c?.volumeMounts ?? [], pod?.volumes ?? []),
  };
}

// Containers and init containers kept per DaemonSet: a plugin's own image is among its first few.
const DS_IMAGES = 16;

/** A DaemonSet reduced to what the network plugin check reads (cluster-facts.ts ApiDaemonSet). */
export function toApiDaemonSet(ds: V1DaemonSet): ApiDaemonSet {
  const pod = ds.spec?.template?.spec;
  const containers = [...(pod?.containers ?? []), ...(pod?.initContainers ?? [])];
  const images = containers.flatMap((c) => (typeof c?.image === "string" ? [c.image] : []));
  // kube-router's flag on any container; the last one written wins, as pflag reads it.
  const proxyFlags = containers.flatMap((c) => {
    const argv = [...(c?.command ?? []), ...(c?.args ?? [])].filter((x) => typeof x === "string");
    const v = flagValue(argv, "run-service-proxy");
    return v === null ? [] : [v];
  });
  const last = proxyFlags.at(-1);
  return {
    namespace: typeof ds.metadata?.namespace === "string" ? ds.metadata.namespace : "",
    name: typeof ds.metadata?.name === "string" ? ds.metadata.name : "",
    images: images.slice(0, DS_IMAGES),
    // strconv.ParseBool's false spellings, which pflag's bool flags take.
    runServiceProxy: last === undefined ? null : !/^(0|f|false)$/i.test(last),
  };
}

/** Labels as the API sent them, keeping only string values (the client passes wrong types through). */
const stringLabels = (l: unknown): Record<string, string> =>
  l && typeof l === "object" && !Array.isArray(l)
    ? Object.fromEntries(Object.entries(l).filter((e): e is [string, string] => typeof e[1] === "string"))
    : {};

/** A kube-proxy static pod's mirror (the kubelet annotates each with kubernetes.io/config.mirror). */
export const MIRROR_ANNOTATION = "kubernetes.io/config.mirror";

export function toMirrorPod(p: V1Pod): MirrorPod {
  const containers = p.spec?.containers ?? [];
  const c = containers.find((x) => x?.name === "kube-proxy") ?? containers[0];
  const argv = [...(c?.command ?? []), ...(c?.args ?? [])].filter((x) => typeof x === "string");
  return {
    name: typeof p.metadata?.name === "string" ? p.metadata.name : "",
    node: typeof p.spec?.nodeName === "string" ? p.spec.nodeName : null,
    labels: stringLabels(p.metadata?.labels),
    image: typeof c?.image === "string" ? c.image : null,
    argv,
    proxyModeFlag: flagValue(argv, "proxy-mode"),
    configFlag: flagValue(argv, "config"),
  };
}

/**
 * The labels kube-proxy static pods carry: RKE2's `component: kube-proxy` (rancher/rke2
 * pkg/podtemplate/podtemplate.go), kOps' `k8s-app: kube-proxy` (kubernetes/kops
 * nodeup/pkg/model/kube_proxy.go). DaemonSet pods match too; only mirror pods are kept.
 */
const STATIC_SELECTORS = ["component=kube-proxy", "k8s-app=kube-proxy"];
// A sample, not an inventory: one page per selector says how kube-proxy is started, on a 5,000-node fleet too.
const STATIC_PAGE = 100;

/**
 * A read that may fail without ending the report; its failure becomes a named gap. A 404 means
 * "absent" only for a named object (`absentOk`): a list or /version cannot be absent.
 */
async function optional<T>(
  what: string,
  gaps: ClusterFacts["gaps"],
  call: () => Promise<T>,
  absentOk = true,
): Promise<T | null> {
  try {
    return await call();
  } catch (e) {
    if (!absentOk || !notFound(e)) gaps.push({ what, reason: describe(e) });
    return null;
  }
}

/**
 * Everything the cluster checks read. Listing nodes is the one read that must succeed: without the
 * node list the report cannot promise that no node is missing. Other failures become named gaps.
 */
export async function gatherCluster(kc: KubeConfig, opts: KubeOptions): Promise<Result<ClusterFacts>> {
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const version = kc.makeApiClient(VersionApi);
  const o = deadline(opts.timeoutMs);
  const ns = opts.kubeProxyNamespace;
  let nodes: V1Node[];
  try {
    nodes = await listAll((cont) => core.listNode({ limit: PAGE, _continue: cont }, o));
  } catch (e) {
    return {
      ok: false,
      error: `cannot list nodes from ${redactUrls(kc.getCurrentCluster()?.server ?? "")}: ${describe(e)}`,
    };
  }
  const gaps: ClusterFacts["gaps"] = [];
  const [v, ds, kubeadm, services, daemonSets] = await Promise.all([
    // getCode(param, options): the options are its second argument, or the call has no deadline.
    optional("/version", gaps, () => version.getCode({}, o), false),
    optional(`daemonset ${ns}/kube-proxy`, gaps, () =>
      apps.readNamespacedDaemonSet({ name: "kube-proxy", namespace: ns }, o),
    ),
    optional(`configmap ${ns}/kubeadm-config`, gaps, () =>
      core.readNamespacedConfigMap({ name: "kubeadm-config", namespace: ns }, o),
    ),
    optional(
      "services (all namespaces)",
      gaps,
      () => listAll((cont) => core.listServiceForAllNamespaces({ limit: PAGE, _continue: cont }, o)),
      false,
    ),
    optional(DAEMONSETS_GAP, gaps, () => listDaemonSets(apps, o), false),
  ]);
  const daemonSet = ds ? toKubeProxyDaemonSet(ds) : null;
  const dsUnread = gaps.some((g) => g.what === `daemonset ${ns}/kube-proxy`);
  // Follow --config to the ConfigMap it mounts; a --config file from elsewhere (hostPath) is not
  // in any ConfigMap, and the conventional one would only mislead.
  const mount = daemonSet?.configMount ?? null;
  const cmName = mount?.kind === "configmap" ? mount.configMap : mount === null ? "kube-proxy" : null;
  const cm =
    cmName === null
      ? null
      : await optional(`configmap ${ns}/${cmName}`, gaps, () =>
          core.readNamespacedConfigMap({ name: cmName, namespace: ns }, o),
        );
  const staticKubeProxy = ds === null && !dsUnread ? await readStaticKubeProxy(core, ns, o, gaps) : null;
  const parsed = v ? parseKubeVersion(v.gitVersion) : null;
  return {
    ok: true,
    value: {
      version: v && parsed ? { gitVersion: v.gitVersion, ...parsed } : null,
      nodes: nodes.map(toApiNode),
      kubeProxyConfigMap: cm
        ? toKubeProxyConfigMap(cm, mount?.kind === "configmap" ? mount.key : null)
        : null,
      kubeProxyDaemonSet: daemonSet,
      staticKubeProxy,
      kubeadm: kubeadm !== null,
      services: (services ?? []).map(toApiService),
      daemonSets,
      gaps,
    },
  };
}

// Pages of DaemonSets read at most: 2,000 is past any real cluster's count, and the bound holds anyway.
const DS_PAGES = 4;

/** Every DaemonSet, reduced as the pages come: a bounded read whose cut says so (`more`). */
async function listDaemonSets(apps: AppsV1Api, o: ConfigurationOptions): Promise<DaemonSetList> {
  const items: ApiDaemonSet[] = [];
  let cont: string | undefined;
  for (let page = 0; page < DS_PAGES; page++) {
    const res = await apps.listDaemonSetForAllNamespaces({ limit: PAGE, _continue: cont }, o);
    items.push(...res.items.map(toApiDaemonSet));
    cont = res.metadata?._continue || undefined;
    if (!cont) return { items, more: false };
  }
  return { items, more: true };
}

export const staticPodsGap = (ns: string) => `pods ${ns} (kube-proxy static pods)`;

/** Mirror pods of kube-proxy static pods in the namespace: one bounded page per known label. */
async function readStaticKubeProxy(
  core: CoreV1Api,
  ns: string,
  o: ConfigurationOptions,
  gaps: ClusterFacts["gaps"],
): Promise<StaticKubeProxy | null> {
  const pages = await optional(
    staticPodsGap(ns),
    gaps,
    () =>
      Promise.all(
        STATIC_SELECTORS.map((labelSelector) =>
          core.listNamespacedPod({ namespace: ns, labelSelector, limit: STATIC_PAGE }, o),
        ),
      ),
    false,
  );
  if (pages === null) return null;
  const seen = new Map<string, MirrorPod>();
  for (const page of pages)
    for (const p of page.items)
      if (p.metadata?.annotations?.[MIRROR_ANNOTATION] !== undefined && !seen.has(p.metadata?.name ?? ""))
        seen.set(p.metadata?.name ?? "", toMirrorPod(p));
  return { pods: [...seen.values()], more: pages.some((p) => Boolean(p.metadata?._continue)) };
}

export interface AgentPod {
  node: string;
  pod: string;
  /** The pod IP and agent port: where a collector in the cluster dials. */
  url: string;
  /** The pod's proxy subresource on the API server, for the same port: where a laptop goes. */
  proxyPath: string;
}

/** Where the agents run: the flags every command that finds them through the API shares. */
export interface AgentPodsQuery {
  timeoutMs: number;
  agentNamespace: string;
  agentSelector: string;
  agentPort: number;
}

/**
 * The agent pods to call: one per node, by label, on the agent port (host network: the pod IP is the
 * node's). The one place the agent lookup is assembled: report, lc-audit and verify all call it with
 * their parsed flags.
 */
export async function listAgentPods(kc: KubeConfig, opts: AgentPodsQuery): Promise<Result<AgentPod[]>> {
  const core = kc.makeApiClient(CoreV1Api);
  try {
    const pods = await listAll((cont) =>
      core.listNamespacedPod(
        { namespace: opts.agentNamespace, labelSelector: opts.agentSelector, limit: PAGE, _continue: cont },
        deadline(opts.timeoutMs),
      ),
    );
    return {
      ok: true,
      value: pods.flatMap((p) => {
        const node = p.spec?.nodeName;
        const ip = p.status?.podIP;
        if (!node || !ip || p.status?.phase !== "Running") return [];
        const host = ip.includes(":") ? `[${ip}]` : ip;
        const pod = p.metadata?.name ?? "";
        return [
          {
            node,
            pod,
            url: `http://${host}:${opts.agentPort}`,
            // GET /api/v1/namespaces/{namespace}/pods/{name}[:{port}]/proxy/{path} (core/v1 PodProxyOptions).
            proxyPath: `/api/v1/namespaces/${encodeURIComponent(opts.agentNamespace)}/pods/${encodeURIComponent(pod)}:${opts.agentPort}/proxy`,
          },
        ];
      }),
    };
  } catch (e) {
    return { ok: false, error: `cannot list agent pods (${opts.agentSelector}): ${describe(e)}` };
  }
}

/** One Service's cluster IP and ports, for lc-audit. */
export async function readService(
  kc: KubeConfig,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<Result<ApiService>> {
  try {
    const s = await kc
      .makeApiClient(CoreV1Api)
      .readNamespacedService({ name, namespace }, deadline(timeoutMs));
    return { ok: true, value: toApiService(s) };
  } catch (e) {
    return { ok: false, error: `cannot read service ${namespace}/${name}: ${describe(e)}` };
  }
}

/**
 * GET through the API server with the kubeconfig's credentials (token, client certificate, exec plugin,
 * proxy-url), with the same deadline, byte cap and memory budget as a direct call. Prepared once per
 * gather: one agent (one pool of connections to the API server) for every node.
 */
export function apiGetter(kc: KubeConfig): Getter {
  let via: Promise<Via> | null = null;
  const prepare = async (): Promise<Via> => {
    const o: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(o);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.headers ?? {})) if (v !== undefined) headers[k] = String(v);
    if (o.auth) headers.authorization = `Basic ${Buffer.from(o.auth).toString("base64")}`;
    return { agent: o.agent as http.Agent | undefined, headers };
  };
  return async (url, opts) => {
    via ??= prepare();
    let v: Via;
    try {
      v = await via;
    } catch (e) {
      via = null;
      return {
        ok: false,
        error: {
          kind: "unreachable",
          message: `cannot authenticate to the API server: ${redactUrls((e as Error).message)}`,
          command: url,
        },
      };
    }
    return httpGetVia(url, v, opts);
  };
}

export type AgentAccess = "auto" | "direct" | "proxy";

/** Direct in the cluster, where pod IPs are reachable; through the API server anywhere else (a laptop). */
export const directAccess = (access: AgentAccess, kube: Kube) =>
  access === "direct" || (access === "auto" && kube.inCluster);

/**
 * Agent calls in flight when --concurrency is not given. Straight to the agents: 64, which with ~2 KB
 * fleet digests holds little memory and halves a 5,000-node gather's wait on slow agents against 32
 * (bench/results/collector-speed.md). Through the pod proxy each call is an API request counted against
 * the API server's in-flight limit (--max-requests-inflight, 400 by default): 32.
 */
export const defaultAgentCalls = (direct: boolean): number => (direct ? 64 : 32);

/** The agent pods as targets, reached the way `access` says. */
export function agentTargets(kube: Kube, pods: readonly AgentPod[], access: AgentAccess): AgentTarget[] {
  if (directAccess(access, kube)) return pods.map((p) => ({ node: p.node, url: p.url }));
  const server = (kube.kc.getCurrentCluster()?.server ?? "").replace(/\/+$/, "");
  const get = apiGetter(kube.kc);
  return pods.map((p) => ({ node: p.node, url: `${server}${p.proxyPath}`, get }));
}

/** The label every EndpointSlice of a Service carries (discovery.k8s.io/v1 LabelServiceName). */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

const bool = (v: unknown, dflt: boolean) => (typeof v === "boolean" ? v : dflt);
const names = (xs: unknown): string[] | null =>
  Array.isArray(xs)
    ? xs.flatMap((x) =>
        typeof (x as { name?: unknown })?.name === "string" ? [(x as { name: string }).name] : [],
      )
    : null;

/** An EndpointSlice reduced to what parity reads; null for one that names no Service. */
export function toApiEndpointSlice(s: V1EndpointSlice): ApiEndpointSlice | null {
  const service = s.metadata?.labels?.[SERVICE_NAME_LABEL];
  if (typeof service !== "string" || typeof s.metadata?.namespace !== "string") return null;
  return {
    namespace: s.metadata.namespace,
    service,
    addressType: typeof s.addressType === "string" ? s.addressType : "",
    endpoints: (s.endpoints ?? []).flatMap((e) => {
      const address = e?.addresses?.[0];
      if (typeof address !== "string") return [];
      const c = e.conditions;
      // types.go: ready and serving nil mean true, terminating nil means false.
      return [
        {
          address,
          ready: bool(c?.ready, true),
          serving: bool(c?.serving, true),
          terminating: bool(c?.terminating, false),
          nodeName: typeof e.nodeName === "string" ? e.nodeName : null,
          forZones: names(e.hints?.forZones),
          forNodes: names(e.hints?.forNodes),
        },
      ];
    }),
    ports: (s.ports ?? []).flatMap((p) =>
      p
        ? [
            {
              name: typeof p.name === "string" ? p.name : "",
              protocol: typeof p.protocol === "string" ? p.protocol : "TCP",
              port: typeof p.port === "number" ? p.port : null,
            },
          ]
        : [],
    ),
  };
}

/**
 * Names per set-based selector (`kubernetes.io/service-name in (a,b,...)`): 50 names of at most 63
 * characters keep the query under 4 KB.
 */
export const SLICE_NAMES_PER_LIST = 50;
/**
 * Past this many flagged Service names, one paged list of every EndpointSlice costs fewer requests
 * than the selectors would (10,000 Services: ~10,000 slices in ~20 pages of 500, against 200 lists).
 */
export const SLICE_SELECTED_MAX = 500;

/** The API server's own words for a failed read, and the permission a 403 lacks. */
function sliceFailure(e: unknown): string {
  let said = describe(e);
  if (e instanceof ApiException) {
    try {
      const b = typeof e.body === "string" ? JSON.parse(e.body) : e.body;
      if (typeof b?.message === "string") said = `HTTP ${e.code}: ${b.message.slice(0, 300)}`;
    } catch {
      // not JSON: describe()'s words stand
    }
    if (e.code === 403)
      return `${said} (needs RBAC: list on endpointslices in API group discovery.k8s.io, cluster-wide, which the ClusterRole proxyscope-collector in manifests/core/collector-rbac.yaml grants; from a laptop: kubectl create clusterrolebinding proxyscope-laptop-YOU --clusterrole=proxyscope-collector --user=YOU; docs/cli.md)`;
  }
  return said;
}

/**
 * The current EndpointSlices of these Services, read within what is left of the gather's deadline
 * (`leftMs`). Every Service asked gets an entry: its slices, or why they were not read. Never throws.
 */
export async function readEndpointSlices(
  kc: KubeConfig,
  wanted: readonly { namespace: string; name: string }[],
  opts: { timeoutMs: number; leftMs: () => number },
): Promise<SliceReads> {
  const out = new Map<string, { ok: true; slices: ApiEndpointSlice[] } | { ok: false; reason: string }>();
  if (wanted.length === 0) return out;
  const keys = new Set(wanted.map((w) => `${w.namespace}/${w.name}`));
  const api = kc.makeApiClient(DiscoveryV1Api);
  const unique = [...new Set(wanted.map((w) => w.name))].sort();
  // One paged list of all, or set-based selectors over the flagged names: whichever asks less.
  const chunks: { names: Set<string> | null; labelSelector?: string }[] =
    unique.length > SLICE_SELECTED_MAX
      ? [{ names: null }]
      : Array.from({ length: Math.ceil(unique.length / SLICE_NAMES_PER_LIST) }, (_, i) => {
          const part = unique.slice(i * SLICE_NAMES_PER_LIST, (i + 1) * SLICE_NAMES_PER_LIST);
          return { names: new Set(part), labelSelector: `${SERVICE_NAME_LABEL} in (${part.join(",")})` };
        });
  const found = new Map<string, ApiEndpointSlice[]>();
  const failed = new Map<string, string>();
  for (const { names, labelSelector } of chunks) {
    try {
      await listAll(async (cont) => {
        const left = opts.leftMs();
        if (left <= 0) throw new DeadlinePassed();
        const page = await api.listEndpointSliceForAllNamespaces(
          { limit: PAGE, _continue: cont, ...(labelSelector ? { labelSelector } : {}) },
          deadline(Math.min(opts.timeoutMs, left)),
        );
        // Only the flagged Services' slices are kept: a page is bounded, the whole list never held.
        for (const item of page.items) {
          const sl = toApiEndpointSlice(item);
          if (sl === null || !keys.has(`${sl.namespace}/${sl.service}`)) continue;
          const k = `${sl.namespace}/${sl.service}`;
          found.set(k, [...(found.get(k) ?? []), sl]);
        }
        return { items: [], metadata: page.metadata };
      });
    } catch (e) {
      const reason =
        e instanceof DeadlinePassed ? "the gather's deadline passed before they were read" : sliceFailure(e);
      for (const w of wanted)
        if (names === null || names.has(w.name)) failed.set(`${w.namespace}/${w.name}`, reason);
    }
  }
  for (const k of keys) {
    const why = failed.get(k);
    out.set(k, why !== undefined ? { ok: false, reason: why } : { ok: true, slices: found.get(k) ?? [] });
  }
  return out;
}

class DeadlinePassed extends Error {}
