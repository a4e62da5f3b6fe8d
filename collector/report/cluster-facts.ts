import { z } from "zod";

// What only the API server knows, reduced to the fields a check reads. Filled by sources/kubernetes/.

const NodeAddress = z.object({ type: z.string(), address: z.string() });

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
  /** spec.providerID (`aws:///…`, `azure:///…`, `gce://…`, `k3s://…`): names the cloud, not the distribution. */
  providerID: z.string().nullable().default(null),
});
export type ApiNode = z.infer<typeof ApiNode>;

/** The KubeProxyConfiguration fields the checks read, as written in the ConfigMap (nothing defaulted). */
const ModeKeys = z.object({
  masqueradeAll: z.boolean().nullable(),
  masqueradeBit: z.number().int().nullable(),
  /** Go durations as written ("1m0s", "5s"). */
  syncPeriod: z.string().nullable(),
  minSyncPeriod: z.string().nullable(),
});
export type ModeKeys = z.infer<typeof ModeKeys>;
const NO_MODE_KEYS: ModeKeys = {
  masqueradeAll: null,
  masqueradeBit: null,
  syncPeriod: null,
  minSyncPeriod: null,
};

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
  /**
   * The keys each mode reads from its own block (kubernetes pkg/proxy/apis/config/v1alpha1/conversion.go):
   * as written, null where not written or written as its zero value (kubeadm renders every key).
   */
  // Defaulted: cluster facts written before these keys were read parse as "none written".
  modeKeys: z
    .object({ iptables: ModeKeys, ipvs: ModeKeys, nftables: ModeKeys })
    .default({ iptables: NO_MODE_KEYS, ipvs: NO_MODE_KEYS, nftables: NO_MODE_KEYS }),
});
export type KubeProxyConfigFile = z.infer<typeof KubeProxyConfigFile>;

export const KubeProxyConfigMap = z.object({
  name: z.string(),
  /** The data key holding the configuration (kubeadm: config.conf; EKS: config). */
  key: z.string().nullable(),
  /**
   * How we knew this is kube-proxy's config: the DaemonSet's --config file, followed to the volume
   * that mounts it ("daemonset-mount"), or the conventional name and keys ("default-name").
   */
  via: z.enum(["daemonset-mount", "default-name"]).default("default-name"),
  config: KubeProxyConfigFile.nullable(),
  /** Why config is null although the ConfigMap exists. */
  parseError: z.string().nullable(),
});
export type KubeProxyConfigMap = z.infer<typeof KubeProxyConfigMap>;

/**
 * The file --config names, followed to the volume mounted over it. A ConfigMap volume gives the
 * ConfigMap and the data key (the path below the mount, mapped back through `items`); any other volume
 * (hostPath, secret) or no mount at all is named, so an unfollowed config is never taken for none.
 */
export const ConfigMount = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("configmap"),
    path: z.string(),
    volume: z.string(),
    configMap: z.string(),
    key: z.string(),
  }),
  z.object({
    kind: z.literal("other-volume"),
    path: z.string(),
    volume: z.string(),
    /** The volume's source type: hostPath, secret, projected, ... */
    source: z.string(),
  }),
  z.object({ kind: z.literal("unmounted"), path: z.string() }),
]);
export type ConfigMount = z.infer<typeof ConfigMount>;

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
  /** The DaemonSet's own labels (EKS marks its add-on eks.amazonaws.com/component: kube-proxy). */
  labels: z.record(z.string(), z.string()).default({}),
  /** Where the --config file comes from, followed through volumeMounts to the volume. */
  configMount: ConfigMount.nullable().default(null),
});
export type KubeProxyDaemonSet = z.infer<typeof KubeProxyDaemonSet>;

const ServicePort = z.object({
  name: z.string().nullable(),
  protocol: z.string(),
  port: z.number().int(),
  nodePort: z.number().int().nullable(),
});

/** One kube-proxy static pod, as the kubelet mirrors it into the API (annotation kubernetes.io/config.mirror). */
export const MirrorPod = z.object({
  name: z.string(),
  node: z.string().nullable(),
  labels: z.record(z.string(), z.string()),
  image: z.string().nullable(),
  argv: z.array(z.string()),
  proxyModeFlag: z.string().nullable(),
  configFlag: z.string().nullable(),
});
export type MirrorPod = z.infer<typeof MirrorPod>;

/**
 * kube-proxy static pods, looked for only when there is no kube-proxy DaemonSet (RKE2, kOps, GKE run
 * kube-proxy so). `more`: the API had further pages we did not read (a bounded sample, not the fleet).
 */
export const StaticKubeProxy = z.object({ pods: z.array(MirrorPod), more: z.boolean() });
export type StaticKubeProxy = z.infer<typeof StaticKubeProxy>;

export const ApiService = z.object({
  namespace: z.string(),
  name: z.string(),
  type: z.string(),
  clusterIPs: z.array(z.string()),
  ports: z.array(ServicePort),
  sessionAffinity: z.string().nullable(),
  internalTrafficPolicy: z.string().nullable(),
  externalTrafficPolicy: z.string().nullable(),
  /** spec.externalIPs and status.loadBalancer.ingress[].ip: addresses ipvs mode bound on kube-ipvs0 too. */
  externalIPs: z.array(z.string()).optional(),
  loadBalancerIPs: z.array(z.string()).optional(),
  /** spec.healthCheckNodePort (ETP-Local LoadBalancers); absent from facts of older collectors: not read. */
  healthCheckNodePort: z.number().int().nullable().optional(),
});
export type ApiService = z.infer<typeof ApiService>;

/**
 * One endpoint of an EndpointSlice (discovery.k8s.io/v1 Endpoint), with its conditions already
 * defaulted as the API defines them: ready and serving nil mean true, terminating nil means false.
 */
export const SliceEndpoint = z.object({
  /** addresses[0]: kube-proxy looks at no other (kubernetes/api discovery/v1 types.go). */
  address: z.string(),
  ready: z.boolean(),
  serving: z.boolean(),
  terminating: z.boolean(),
  nodeName: z.string().nullable(),
  /** hints.forZones / hints.forNodes names; null when the endpoint has no such hint. */
  forZones: z.array(z.string()).nullable(),
  forNodes: z.array(z.string()).nullable(),
});
export type SliceEndpoint = z.infer<typeof SliceEndpoint>;

/** An EndpointSlice of a Service (label kubernetes.io/service-name), reduced to what parity reads. */
export const ApiEndpointSlice = z.object({
  namespace: z.string(),
  service: z.string(),
  addressType: z.string(),
  endpoints: z.array(SliceEndpoint),
  /** ports[]: name "" for a Service's unnamed port; port null on slices not made for a Service. */
  ports: z.array(z.object({ name: z.string(), protocol: z.string(), port: z.number().int().nullable() })),
});
export type ApiEndpointSlice = z.infer<typeof ApiEndpointSlice>;

/**
 * The current EndpointSlices of the Services parity flagged, by "ns/name": the slices read, or why
 * they could not be (a 403 names the permission); a Service never asked is absent from the map.
 */
export type SliceReads = ReadonlyMap<
  string,
  { ok: true; slices: ApiEndpointSlice[] } | { ok: false; reason: string }
>;

/**
 * A DaemonSet of any namespace, reduced to what the network plugin check reads: its images (containers,
 * then init containers) and kube-router's --run-service-proxy as written (null: not passed; kube-router's
 * default is on, cloudnativelabs/kube-router pkg/options/options.go).
 */
export const ApiDaemonSet = z.object({
  namespace: z.string(),
  name: z.string(),
  images: z.array(z.string()),
  runServiceProxy: z.boolean().nullable(),
});
export type ApiDaemonSet = z.infer<typeof ApiDaemonSet>;

/** Every DaemonSet the API listed; `more`: the list went on past the pages read (a bounded read). */
export const DaemonSetList = z.object({ items: z.array(ApiDaemonSet), more: z.boolean() });
export type DaemonSetList = z.infer<typeof DaemonSetList>;
/** The gap a failed DaemonSet list is reported under (the network plugin check quotes its reason). */
export const DAEMONSETS_GAP = "daemonsets (all namespaces)";

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
  /** null: not looked for (a DaemonSet exists, or its read failed) or the list failed (a gap says so). */
  staticKubeProxy: StaticKubeProxy.nullable().default(null),
  /** The kubeadm-config ConfigMap exists: kubeadm regenerates kube-proxy's ConfigMap on upgrade. */
  kubeadm: z.boolean(),
  services: z.array(ApiService),
  /**
   * The cluster's DaemonSets (the network plugin is one). null: not read — the list failed (a gap says
   * why) or the facts come from a collector that did not read them; never "no plugin".
   */
  daemonSets: DaemonSetList.nullable().default(null),
  /** Reads that failed without making the report impossible (e.g. RBAC forbids Services). */
  gaps: z.array(z.object({ what: z.string(), reason: z.string() })),
});
export type ClusterFacts = z.infer<typeof ClusterFacts>;

/**
 * Where kube-proxy's mode comes from, judged once (checks/config-source.ts) and shown in the report.
 * `pin`: pinned (the source read names a mode), not-pinned (read, and it names none: upstream's default
 * applies), distribution (the distribution passes the mode itself: k3s's built-in --proxy-mode),
 * unknown (not read, or not visible in the API: the nodes' /proxyMode is then the truth).
 */
export const ConfigSource = z.object({
  kind: z.enum(["configmap", "flags", "static-pod", "distribution", "file", "unknown", "none"]),
  pin: z.enum(["pinned", "not-pinned", "distribution", "unknown"]),
  mode: z.string().nullable(),
  /** In words, for the report and the plan. */
  where: z.string(),
  distribution: z.string(),
  distributionEvidence: z.array(z.string()),
  configMap: z.string().nullable(),
  key: z.string().nullable(),
  /** Whether that ConfigMap was read and parsed; null when no ConfigMap is involved. */
  read: z.boolean().nullable(),
  proxyModeFlags: z.array(z.string()),
  mirrorPods: z.number().int().nullable(),
  /** What the nodes' /proxyMode answered, as "mode=count" (phases kube-proxy itself named). */
  nodesAnswered: z.array(z.string()),
});
export type ConfigSource = z.infer<typeof ConfigSource>;
