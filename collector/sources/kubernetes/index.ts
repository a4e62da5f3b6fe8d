// The collector's reads of the Kubernetes API, one file per resource (as kube-state-metrics keeps
// internal/store/<resource>.go), and this one entry the rest of the collector imports them through.
export {
  agentTargets,
  apiGetter,
  defaultAgentCalls,
  directAccess,
  type AgentAccess,
} from "./agent-access.js";
export { gatherCluster, type KubeOptions } from "./cluster.js";
export { toKubeProxyConfigMap } from "./configmaps.js";
export { toApiDaemonSet, toKubeProxyDaemonSet } from "./daemonsets.js";
export { deadline } from "./deadline.js";
export {
  readEndpointSlices,
  SERVICE_NAME_LABEL,
  SLICE_NAMES_PER_LIST,
  SLICE_SELECTED_MAX,
  toApiEndpointSlice,
} from "./endpointslices.js";
export { describe, notFound } from "./errors.js";
export { loadKubeConfig, type Kube, type KubeSource } from "./kubeconfig.js";
export { toApiNode } from "./nodes.js";
export {
  listAgentPods,
  MIRROR_ANNOTATION,
  staticPodsGap,
  toMirrorPod,
  type AgentPod,
  type AgentPodsQuery,
} from "./pods.js";
export { readService, toApiService } from "./services.js";
