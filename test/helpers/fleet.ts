import { failedObservation } from "../../collector/gather/observe.js";
import type {
  ApiNode,
  ApiService,
  ClusterFacts,
  KubeProxyConfigFile,
} from "../../collector/report/cluster-facts.js";
import type { NodeObservation } from "../../collector/report/schema.js";

// Cluster facts as the API would give them (a kubeadm-style kube-proxy), and small fleets for the rollup and the collector's server: API nodes, answered observations, rollup input.

const noModeKeys = { masqueradeAll: null, masqueradeBit: null, syncPeriod: null, minSyncPeriod: null };

export const cfg = (over: Partial<KubeProxyConfigFile> = {}): KubeProxyConfigFile => ({
  mode: "",
  ipvs: null,
  featureGates: {},
  nodePortAddresses: null,
  conntrackTcpBeLiberal: null,
  modeKeys: { iptables: noModeKeys, ipvs: noModeKeys, nftables: noModeKeys },
  ...over,
});

export function facts(
  over: Partial<ClusterFacts> = {},
  config: KubeProxyConfigFile | null = cfg(),
): ClusterFacts {
  return {
    version: { gitVersion: "v1.37.1", major: 1, minor: 37 },
    nodes: [],
    kubeProxyConfigMap: {
      name: "kube-proxy",
      key: "config.conf",
      via: "daemonset-mount",
      config,
      parseError: null,
    },
    kubeProxyDaemonSet: {
      name: "kube-proxy",
      image: "registry.k8s.io/kube-proxy:v1.37.1",
      argv: ["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf"],
      proxyModeFlag: null,
      featureGatesFlag: null,
      configFlag: "/var/lib/kube-proxy/config.conf",
      updateStrategy: "RollingUpdate",
      maxUnavailable: 1,
      configMapVolumes: ["kube-proxy"],
      labels: { "k8s-app": "kube-proxy" },
      configMount: {
        kind: "configmap",
        path: "/var/lib/kube-proxy/config.conf",
        volume: "kube-proxy",
        configMap: "kube-proxy",
        key: "config.conf",
      },
    },
    staticKubeProxy: null,
    kubeadm: false,
    services: [],
    // Read, and no network plugin among them: the plugin check says nothing unless a fleet adds one.
    daemonSets: { items: [], more: false },
    gaps: [],
    ...over,
  };
}

/** kube-proxy reading --config from a hostPath volume: a file the API cannot show. */
export function hostFileFacts(): ClusterFacts {
  const f = facts({}, null);
  f.kubeProxyDaemonSet!.configMount = {
    kind: "other-volume",
    path: "/etc/kube-proxy/config.yaml",
    volume: "host",
    source: "hostPath",
  };
  f.kubeProxyConfigMap = null;
  return f;
}

/** A ClusterIP Service as the API lists it, in namespace prod unless `over` says otherwise. */
export const apiService = (name: string, over: Partial<ApiService> = {}): ApiService => ({
  namespace: "prod",
  name,
  type: "ClusterIP",
  clusterIPs: ["10.0.0.1"],
  ports: [],
  sessionAffinity: "None",
  internalTrafficPolicy: "Cluster",
  externalTrafficPolicy: null,
  ...over,
});

export const apiNode = (
  name: string,
  kernelVersion = "6.8.0-1015-aws",
  labels: Record<string, string> = {},
): ApiNode => ({
  name,
  kubeletVersion: "v1.37.1",
  kernelVersion,
  osImage: "Ubuntu 24.04.1 LTS",
  addresses: [{ type: "InternalIP", address: "10.0.0.1" }],
  labels,
  ready: true,
  unschedulable: false,
  providerID: null,
});
export const ok = (
  node: string,
  phase: NodeObservation["phase"],
  verdict: NodeObservation["verdict"],
  findings: NodeObservation["findings"] = [],
): NodeObservation => ({
  ...failedObservation(node, null, "no-data", ""),
  outcome: "ok",
  reason: null,
  phase,
  verdict,
  findings,
});

export const input = (observations: NodeObservation[], nodes: ApiNode[]) => ({
  source: "agents" as const,
  collectorVersion: "0.1.0",
  generatedAt: new Date("2026-11-29T12:00:00Z"),
  cluster: facts({ nodes }, cfg({ mode: "ipvs" })),
  observations,
  missingOutcome: "no-agent" as const,
});
