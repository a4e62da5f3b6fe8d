import { z } from "zod";

// What only the API server knows, reduced to the fields a check reads. Filled by sources/kubernetes.ts.

export const NodeAddress = z.object({ type: z.string(), address: z.string() });

export const ApiNode = z.object({
  name: z.string(),
  kubeletVersion: z.string().nullable(),
  /** `uname -r` as the kubelet reported it (status.nodeInfo.kernelVersion). */
  kernelVersion: z.string().nullable(),
  osImage: z.string().nullable(),
  addresses: z.array(NodeAddress),
  labels: z.record(z.string(), z.string()),
  /** True when the Ready condition is True; null when the node reports no Ready condition. */
  ready: z.boolean().nullable(),
  unschedulable: z.boolean(),
});
export type ApiNode = z.infer<typeof ApiNode>;

/** The KubeProxyConfiguration fields the checks read, as written in the ConfigMap (nothing defaulted). */
export const KubeProxyConfigFile = z.object({
  /** Verbatim; "" when the key is present but empty, null when absent. Both mean "not pinned". */
  mode: z.string().nullable(),
  ipvs: z
    .object({
      scheduler: z.string().nullable(),
      strictARP: z.boolean().nullable(),
      /** Any key set in the block, so "a block left behind" is visible even with all defaults. */
      keys: z.array(z.string()),
    })
    .nullable(),
  featureGates: z.record(z.string(), z.boolean()),
  nodePortAddresses: z.array(z.string()).nullable(),
  conntrackTcpBeLiberal: z.boolean().nullable(),
});
export type KubeProxyConfigFile = z.infer<typeof KubeProxyConfigFile>;

export const KubeProxyConfigMap = z.object({
  name: z.string(),
  /** The data key holding the configuration (kubeadm: config.conf). */
  key: z.string().nullable(),
  config: KubeProxyConfigFile.nullable(),
  /** Why config is null although the ConfigMap exists. */
  parseError: z.string().nullable(),
});
export type KubeProxyConfigMap = z.infer<typeof KubeProxyConfigMap>;

export const KubeProxyDaemonSet = z.object({
  name: z.string(),
  image: z.string().nullable(),
  /** command + args of the kube-proxy container: kubeadm puts its flags in `command`. */
  argv: z.array(z.string()),
  proxyModeFlag: z.string().nullable(),
  featureGatesFlag: z.record(z.string(), z.boolean()).nullable(),
  configFlag: z.string().nullable(),
  updateStrategy: z.string().nullable(),
  maxUnavailable: z.union([z.string(), z.number()]).nullable(),
  /** Config map names mounted into the pod, to tell which ConfigMap really feeds --config. */
  configMapVolumes: z.array(z.string()),
});
export type KubeProxyDaemonSet = z.infer<typeof KubeProxyDaemonSet>;

export const ServicePort = z.object({
  name: z.string().nullable(),
  protocol: z.string(),
  port: z.number().int(),
  nodePort: z.number().int().nullable(),
});

export const ApiService = z.object({
  namespace: z.string(),
  name: z.string(),
  type: z.string(),
  clusterIPs: z.array(z.string()),
  ports: z.array(ServicePort),
  sessionAffinity: z.string().nullable(),
  internalTrafficPolicy: z.string().nullable(),
  externalTrafficPolicy: z.string().nullable(),
});
export type ApiService = z.infer<typeof ApiService>;

export const ClusterVersion = z.object({
  gitVersion: z.string(),
  major: z.number().int(),
  minor: z.number().int(),
});
export type ClusterVersion = z.infer<typeof ClusterVersion>;

export const ClusterFacts = z.object({
  version: ClusterVersion.nullable(),
  nodes: z.array(ApiNode),
  kubeProxyConfigMap: KubeProxyConfigMap.nullable(),
  kubeProxyDaemonSet: KubeProxyDaemonSet.nullable(),
  /** The kubeadm-config ConfigMap exists: kubeadm regenerates kube-proxy's ConfigMap on upgrade. */
  kubeadm: z.boolean(),
  services: z.array(ApiService),
  /** Reads that failed without making the report impossible (e.g. RBAC forbids Services). */
  gaps: z.array(z.object({ what: z.string(), reason: z.string() })),
});
export type ClusterFacts = z.infer<typeof ClusterFacts>;
