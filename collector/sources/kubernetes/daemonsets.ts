import type { AppsV1Api, ConfigurationOptions, V1DaemonSet } from "@kubernetes/client-node";
import { configMountOf, flagValue, parseFeatureGatesFlag } from "../../parse/kube-proxy-config.js";
import type { ApiDaemonSet, DaemonSetList, KubeProxyDaemonSet } from "../../report/cluster-facts.js";
import { containerArgv, stringLabels } from "./fields.js";
import { PAGE } from "./paging.js";

/** The gap's name when kube-proxy's DaemonSet could not be read. */
export const kubeProxyDaemonSetGap = (ns: string) => `daemonset ${ns}/kube-proxy`;

export const readKubeProxyDaemonSet = (
  apps: AppsV1Api,
  namespace: string,
  o: ConfigurationOptions,
): Promise<V1DaemonSet> => apps.readNamespacedDaemonSet({ name: "kube-proxy", namespace }, o);

export function toKubeProxyDaemonSet(ds: V1DaemonSet): KubeProxyDaemonSet {
  const containers = ds.spec?.template?.spec?.containers ?? [];
  const c = containers.find((x) => x?.name === "kube-proxy") ?? containers[0];
  const argv = containerArgv(c);
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
function toApiDaemonSet(ds: V1DaemonSet): ApiDaemonSet {
  const pod = ds.spec?.template?.spec;
  const containers = [...(pod?.containers ?? []), ...(pod?.initContainers ?? [])];
  const images = containers.flatMap((c) => (typeof c?.image === "string" ? [c.image] : []));
  // kube-router's flag on any container; the last one written wins, as pflag reads it.
  const proxyFlags = containers.flatMap((c) => {
    const v = flagValue(containerArgv(c), "run-service-proxy");
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

// Pages of DaemonSets read at most: 2,000 is past any real cluster's count, and the bound holds anyway.
const DS_PAGES = 4;

/** Every DaemonSet, reduced as the pages come: a bounded read whose cut says so (`more`). */
export async function listDaemonSets(apps: AppsV1Api, o: ConfigurationOptions): Promise<DaemonSetList> {
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
