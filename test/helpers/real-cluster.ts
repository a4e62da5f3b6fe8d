// The small cluster the real kube-proxy is run against (test/helpers/real-kube-proxy.ts): one Node (this
// node, dual-stack), a ServiceCIDR per family, and a Service of each kind a careful node check reads,
// each with a ready endpoint on this node. Shapes: k8s.io/api core/v1, discovery/v1, networking/v1.
import { NODE_NAME } from "./real-kube-proxy.js";

export const NODE_IP4 = "10.88.0.10";
export const NODE_IP6 = "fd00:88::10";

const meta = (name: string, extra: object = {}) => ({
  name,
  namespace: "default",
  uid: `00000000-0000-4000-8000-${Buffer.from(name).toString("hex").padEnd(12, "0").slice(0, 12)}`,
  resourceVersion: "100",
  creationTimestamp: "2026-01-01T00:00:00Z",
  ...extra,
});

function service(name: string, spec: object, status: object = {}) {
  return {
    metadata: meta(name),
    spec: { sessionAffinity: "None", ...spec },
    status: { loadBalancer: {}, ...status },
  };
}

function slice(service: string, family: "IPv4" | "IPv6", address: string, port: number) {
  return {
    metadata: meta(`${service}-${family.toLowerCase()}`, {
      labels: {
        "kubernetes.io/service-name": service,
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
      },
    }),
    addressType: family,
    endpoints: [
      {
        addresses: [address],
        conditions: { ready: true, serving: true, terminating: false },
        nodeName: NODE_NAME,
        targetRef: { kind: "Pod", namespace: "default", name: `${service}-pod` },
      },
    ],
    ports: [{ name: "http", protocol: "TCP", port }],
  };
}

const port = (extra: object = {}) => ({
  name: "http",
  protocol: "TCP",
  port: 80,
  targetPort: 8080,
  ...extra,
});

export function realCluster(version: string): object {
  return {
    version: { major: "1", minor: version.split(".")[1], gitVersion: version, platform: "linux/amd64" },
    nodes: [
      {
        metadata: {
          name: NODE_NAME,
          uid: "00000000-0000-4000-8000-00000000000a",
          resourceVersion: "100",
          labels: { "kubernetes.io/hostname": NODE_NAME },
        },
        spec: { podCIDR: "10.244.0.0/24", podCIDRs: ["10.244.0.0/24", "fd00:244::/64"] },
        status: {
          addresses: [
            { type: "InternalIP", address: NODE_IP4 },
            { type: "InternalIP", address: NODE_IP6 },
            { type: "Hostname", address: NODE_NAME },
          ],
        },
      },
    ],
    serviceCIDRs: [
      {
        metadata: { name: "kubernetes", uid: "00000000-0000-4000-8000-00000000000b", resourceVersion: "100" },
        spec: { cidrs: ["10.96.0.0/16", "fd00:96::/112"] },
      },
    ],
    services: [
      service("web", {
        type: "ClusterIP",
        clusterIP: "10.96.0.10",
        clusterIPs: ["10.96.0.10", "fd00:96::10"],
        ipFamilies: ["IPv4", "IPv6"],
        ipFamilyPolicy: "RequireDualStack",
        ports: [port()],
        sessionAffinity: "ClientIP",
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        internalTrafficPolicy: "Cluster",
      }),
      service("np", {
        type: "NodePort",
        clusterIP: "10.96.0.11",
        clusterIPs: ["10.96.0.11"],
        ipFamilies: ["IPv4"],
        ipFamilyPolicy: "SingleStack",
        ports: [port({ nodePort: 30080 })],
        externalTrafficPolicy: "Cluster",
        internalTrafficPolicy: "Cluster",
      }),
      service(
        "lb",
        {
          type: "LoadBalancer",
          clusterIP: "10.96.0.12",
          clusterIPs: ["10.96.0.12"],
          ipFamilies: ["IPv4"],
          ipFamilyPolicy: "SingleStack",
          ports: [port({ nodePort: 30081 })],
          externalTrafficPolicy: "Local",
          healthCheckNodePort: 32000,
          internalTrafficPolicy: "Cluster",
        },
        { loadBalancer: { ingress: [{ ip: "192.0.2.50", ipMode: "VIP" }] } },
      ),
    ],
    endpointSlices: [
      slice("web", "IPv4", "10.244.0.5", 8080),
      slice("web", "IPv6", "fd00:244::5", 8080),
      slice("np", "IPv4", "10.244.0.6", 8080),
      slice("lb", "IPv4", "10.244.0.7", 8080),
    ],
    configMaps: [],
    daemonSets: [],
    pods: [],
  };
}
