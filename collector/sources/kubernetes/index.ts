// The collector's reads of the Kubernetes API, one file per resource (as kube-state-metrics keeps
// internal/store/<resource>.go), and this one entry the rest of the collector imports them through.
export { agentTargets, defaultAgentCalls, directAccess, type AgentAccess } from "./agent-access.js";
export { gatherCluster } from "./cluster.js";
export { toKubeProxyConfigMap } from "./configmaps.js";
export { toKubeProxyDaemonSet } from "./daemonsets.js";
export { deadline } from "./deadline.js";
export { readEndpointSlices } from "./endpointslices.js";
export { describe, notFound } from "./errors.js";
export { loadKubeConfig, type Kube } from "./kubeconfig.js";
export { toApiNode } from "./nodes.js";
export { listAgentPods, toMirrorPod } from "./pods.js";
export { readService, toApiService } from "./services.js";
