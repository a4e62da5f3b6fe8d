import type { RecordingSpec } from "./profile.js";

// The API objects the REAL kube-proxy is run against when a profile node's own state is recorded
// (record-kube-proxy.ts): the Services every profile serves — default/kubernetes (10.96.0.1:443 to the
// API server on the node, port 6443), kube-system/kube-dns (10.96.0.10, UDP 53, two endpoints) and ns1/svc1
// (172.30.0.41:80, a NodePort) — plus the externalIP Service of a profile that has one, and this node's
// Node object. Shapes: k8s.io/api core/v1, discovery/v1, networking/v1 (as test/helpers/real-cluster.ts).

export const RECORD_NODE_NAME = "proxyscope-node";

let uids = 0;
const meta = (name: string, namespace: string, extra: object = {}) => ({
  name,
  namespace,
  uid: `00000000-0000-4000-8000-${String(++uids).padStart(12, "0")}`,
  resourceVersion: "100",
  creationTimestamp: "2026-01-01T00:00:00Z",
  ...extra,
});

interface Port {
  name: string;
  protocol: "TCP" | "UDP";
  port: number;
  targetPort: number;
  nodePort?: number;
}

function service(namespace: string, name: string, clusterIP: string, ports: Port[], extra: object = {}) {
  return {
    metadata: meta(name, namespace),
    spec: {
      type: ports.some((p) => p.nodePort !== undefined) ? "NodePort" : "ClusterIP",
      clusterIP,
      clusterIPs: [clusterIP],
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      ports,
      sessionAffinity: "None",
      internalTrafficPolicy: "Cluster",
      ...(ports.some((p) => p.nodePort !== undefined) ? { externalTrafficPolicy: "Cluster" } : {}),
      ...extra,
    },
    status: { loadBalancer: {} },
  };
}

function slice(namespace: string, svc: string, addresses: string[], ports: Port[]) {
  return {
    metadata: meta(`${svc}-ipv4`, namespace, {
      labels: {
        "kubernetes.io/service-name": svc,
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
      },
    }),
    addressType: "IPv4",
    endpoints: addresses.map((address) => ({
      addresses: [address],
      conditions: { ready: true, serving: true, terminating: false },
    })),
    ports: ports.map((p) => ({ name: p.name, protocol: p.protocol, port: p.targetPort })),
  };
}

/** The cluster (the API server stand-in's CLUSTER.json, test/standins/apiserver.ts) for one recording. */
export function profileCluster(spec: RecordingSpec): object {
  uids = 0;
  const nodeIp = spec.nodeIps[0]!;
  const https: Port[] = [{ name: "https", protocol: "TCP", port: 443, targetPort: 6443 }];
  const dns: Port[] = [{ name: "dns", protocol: "UDP", port: 53, targetPort: 53 }];
  const p80: Port[] = [{ name: "p80", protocol: "TCP", port: 80, targetPort: 8080, nodePort: spec.nodePort }];
  const ext = spec.externalIP;
  const extPorts: Port[] = [{ name: "test-port", protocol: "TCP", port: 80, targetPort: 8080 }];
  const [major, minor] = spec.version.slice(1).split(".");
  return {
    version: { major, minor, gitVersion: spec.version, platform: "linux/amd64" },
    nodes: [
      {
        metadata: {
          name: RECORD_NODE_NAME,
          uid: "00000000-0000-4000-8000-00000000000a",
          resourceVersion: "100",
          labels: { "kubernetes.io/hostname": RECORD_NODE_NAME },
        },
        spec: { podCIDR: "10.244.1.0/24", podCIDRs: ["10.244.1.0/24"] },
        status: {
          addresses: [
            ...spec.nodeIps.map((address) => ({ type: "InternalIP", address })),
            { type: "Hostname", address: RECORD_NODE_NAME },
          ],
        },
      },
    ],
    serviceCIDRs: [
      {
        metadata: { name: "kubernetes", uid: "00000000-0000-4000-8000-00000000000b", resourceVersion: "100" },
        spec: { cidrs: ["10.96.0.0/12"] },
      },
      {
        metadata: { name: "svc1-range", uid: "00000000-0000-4000-8000-00000000000c", resourceVersion: "100" },
        spec: { cidrs: ["172.30.0.0/16"] },
      },
    ],
    services: [
      service("default", "kubernetes", "10.96.0.1", https),
      service("kube-system", "kube-dns", "10.96.0.10", dns),
      service("ns1", "svc1", "172.30.0.41", p80),
      ...(ext ? [service("web", "test", ext.clusterIP, extPorts, { externalIPs: [ext.address] })] : []),
    ],
    endpointSlices: [
      slice("default", "kubernetes", [nodeIp], https),
      slice("kube-system", "kube-dns", ["10.244.1.2", "10.244.2.3"], dns),
      slice("ns1", "svc1", ["10.244.1.5"], p80),
      ...(ext ? [slice("web", "test", [ext.endpoint], extPorts)] : []),
    ],
    configMaps: [],
    daemonSets: [],
    pods: [],
  };
}
