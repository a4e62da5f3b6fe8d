import type { ClusterFacts } from "../report/cluster-facts.js";
import { configSource } from "./config-source.js";

/**
 * The mode the cluster is configured for where kube-proxy really reads it (flags, the ConfigMap its
 * --config mounts, its static pods); null when that names none, or was not read.
 */
export function configuredMode(facts: ClusterFacts): string | null {
  return configSource(facts).mode;
}

/** Gates from the ConfigMap, overridden by the DaemonSet's --feature-gates (flags are read last). */
export function effectiveGates(facts: ClusterFacts): Record<string, boolean> {
  return {
    ...(facts.kubeProxyConfigMap?.config?.featureGates ?? {}),
    ...(facts.kubeProxyDaemonSet?.featureGatesFlag ?? {}),
  };
}
