import { AppsV1Api, CoreV1Api, VersionApi, type KubeConfig } from "@kubernetes/client-node";
import { redactUrls } from "../../../common/redact.js";
import type { Result } from "../../../common/result.js";
import { DAEMONSETS_GAP, type ApiNode, type ClusterFacts } from "../../report/cluster-facts.js";
import { readConfigMap, readKubeProxyConfigMap } from "./configmaps.js";
import {
  kubeProxyDaemonSetGap,
  listDaemonSets,
  readKubeProxyDaemonSet,
  toKubeProxyDaemonSet,
} from "./daemonsets.js";
import { deadline } from "./deadline.js";
import { describe, optional } from "./errors.js";
import { listNodes } from "./nodes.js";
import { readStaticKubeProxy } from "./pods.js";
import { listServices, toApiService } from "./services.js";
import { readVersion, toClusterVersion } from "./version.js";

interface KubeOptions {
  timeoutMs: number;
  /** Where kube-proxy's ConfigMap and DaemonSet live. */
  kubeProxyNamespace: string;
}

/**
 * Everything the cluster checks read. Listing nodes is the one read that must succeed: without the
 * node list the report cannot promise that no node is missing. Other failures become named gaps.
 */
export async function gatherCluster(kc: KubeConfig, opts: KubeOptions): Promise<Result<ClusterFacts>> {
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const o = deadline(opts.timeoutMs);
  const ns = opts.kubeProxyNamespace;
  let nodes: ApiNode[];
  try {
    nodes = await listNodes(kc, opts.timeoutMs);
  } catch (e) {
    return {
      ok: false,
      error: `cannot list nodes from ${redactUrls(kc.getCurrentCluster()?.server ?? "")}: ${describe(e)}`,
    };
  }
  const gaps: ClusterFacts["gaps"] = [];
  const [v, ds, kubeadm, services, daemonSets] = await Promise.all([
    optional("/version", gaps, () => readVersion(kc.makeApiClient(VersionApi), o), false),
    optional(kubeProxyDaemonSetGap(ns), gaps, () => readKubeProxyDaemonSet(apps, ns, o)),
    optional(`configmap ${ns}/kubeadm-config`, gaps, () => readConfigMap(core, ns, "kubeadm-config", o)),
    optional("services (all namespaces)", gaps, () => listServices(core, o), false),
    optional(DAEMONSETS_GAP, gaps, () => listDaemonSets(apps, o), false),
  ]);
  const daemonSet = ds ? toKubeProxyDaemonSet(ds) : null;
  const dsUnread = gaps.some((g) => g.what === kubeProxyDaemonSetGap(ns));
  const kubeProxyConfigMap = await readKubeProxyConfigMap(core, ns, daemonSet?.configMount ?? null, o, gaps);
  const staticKubeProxy = ds === null && !dsUnread ? await readStaticKubeProxy(core, ns, o, gaps) : null;
  return {
    ok: true,
    value: {
      version: toClusterVersion(v),
      nodes,
      kubeProxyConfigMap,
      kubeProxyDaemonSet: daemonSet,
      staticKubeProxy,
      kubeadm: kubeadm !== null,
      services: (services ?? []).map(toApiService),
      daemonSets,
      gaps,
    },
  };
}
