import { CoreV1Api, type ConfigurationOptions, type KubeConfig, type V1Pod } from "@kubernetes/client-node";
import type { Result } from "../../../common/result.js";
import { flagValue } from "../../parse/kube-proxy-config.js";
import type { ClusterFacts, MirrorPod, StaticKubeProxy } from "../../report/cluster-facts.js";
import { deadline } from "./deadline.js";
import { describe, optional } from "./errors.js";
import { containerArgv, stringLabels } from "./fields.js";
import { listAll, PAGE } from "./paging.js";

// Two reads of pods: kube-proxy's static pods (through their mirrors), and the agent pods to call.

/** A kube-proxy static pod's mirror (the kubelet annotates each with kubernetes.io/config.mirror). */
const MIRROR_ANNOTATION = "kubernetes.io/config.mirror";

export function toMirrorPod(p: V1Pod): MirrorPod {
  const containers = p.spec?.containers ?? [];
  const c = containers.find((x) => x?.name === "kube-proxy") ?? containers[0];
  const argv = containerArgv(c);
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

const staticPodsGap = (ns: string) => `pods ${ns} (kube-proxy static pods)`;

/** Mirror pods of kube-proxy static pods in the namespace: one bounded page per known label. */
export async function readStaticKubeProxy(
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
interface AgentPodsQuery {
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
    return { ok: true, value: pods.flatMap((p) => agentPodOf(p, opts)) };
  } catch (e) {
    return { ok: false, error: `cannot list agent pods (${opts.agentSelector}): ${describe(e)}` };
  }
}

/** A running agent pod with a node and an IP, as the two addresses it is called at; else none. */
function agentPodOf(p: V1Pod, opts: AgentPodsQuery): AgentPod[] {
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
}
