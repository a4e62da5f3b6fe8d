import type { ConfigurationOptions, CoreV1Api, V1ConfigMap } from "@kubernetes/client-node";
import { parseKubeProxyConfig } from "../../parse/kube-proxy-config.js";
import type { ClusterFacts, KubeProxyConfigMap, KubeProxyDaemonSet } from "../../report/cluster-facts.js";
import { optional } from "./errors.js";

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

/** One named ConfigMap; a failed read is the caller's to turn into a gap. */
export const readConfigMap = (
  core: CoreV1Api,
  namespace: string,
  name: string,
  o: ConfigurationOptions,
): Promise<V1ConfigMap> => core.readNamespacedConfigMap({ name, namespace }, o);

/**
 * kube-proxy's ConfigMap: the one the DaemonSet's --config mounts, else (no --config) the one named
 * kube-proxy. A --config file from elsewhere (hostPath) is not in any ConfigMap, and the conventional
 * one would only mislead: none is read.
 */
export async function readKubeProxyConfigMap(
  core: CoreV1Api,
  ns: string,
  mount: KubeProxyDaemonSet["configMount"],
  o: ConfigurationOptions,
  gaps: ClusterFacts["gaps"],
): Promise<KubeProxyConfigMap | null> {
  const name = mount?.kind === "configmap" ? mount.configMap : mount === null ? "kube-proxy" : null;
  if (name === null) return null;
  const cm = await optional(`configmap ${ns}/${name}`, gaps, () => readConfigMap(core, ns, name, o));
  return cm ? toKubeProxyConfigMap(cm, mount?.kind === "configmap" ? mount.key : null) : null;
}
