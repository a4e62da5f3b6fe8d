// The network plugin check end to end: the built collector lists DaemonSets from the API server
// STAND-IN (apps/v1 DaemonSetList, every namespace, paged) carrying real plugin image strings, and the
// fleet report says which plugin version blocks kube-proxy's nftables mode. A list the API refuses is
// "not read", with the API's reason — never "no plugin".
import t from "tap";
import { FleetReport } from "../../collector/report/schema.js";
import { collector, fixture, fleetFlags, node, startApiServer } from "./collector-fleet.js";

const ID = "cluster-network-plugin-nftables-support";

/** An apps/v1 DaemonSet as the API serves it, with these containers (and init containers). */
function daemonSet(
  namespace: string,
  name: string,
  containers: { name: string; image: string; args?: string[] }[],
  initContainers: { name: string; image: string }[] = [],
): object {
  return {
    kind: "DaemonSet",
    apiVersion: "apps/v1",
    metadata: { name, namespace, labels: { "k8s-app": name }, resourceVersion: "4711" },
    spec: {
      selector: { matchLabels: { "k8s-app": name } },
      template: {
        metadata: { labels: { "k8s-app": name } },
        spec: { hostNetwork: true, containers, initContainers },
      },
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } },
    },
    status: { desiredNumberScheduled: 1, numberReady: 1 },
  };
}

const plugins = [
  daemonSet(
    "calico-system",
    "calico-node",
    [{ name: "calico-node", image: "docker.io/calico/node:v3.27.0" }],
    [
      { name: "flexvol-driver", image: "docker.io/calico/pod2daemon-flexvol:v3.27.0" },
      { name: "install-cni", image: "docker.io/calico/cni:v3.27.0" },
    ],
  ),
  daemonSet("kube-system", "cilium", [
    {
      name: "cilium-agent",
      image:
        "quay.io/cilium/cilium:v1.15.1@sha256:351d6685dc6f6ffbcd5451043167cfa8842c6decf80d8c8e426a417c73fb56d4",
    },
  ]),
  daemonSet(
    "kube-flannel",
    "kube-flannel-ds",
    [{ name: "kube-flannel", image: "ghcr.io/flannel-io/flannel:v0.24.2" }],
    [{ name: "install-cni-plugin", image: "ghcr.io/flannel-io/flannel-cni-plugin:v1.4.0-flannel1" }],
  ),
  daemonSet("kube-system", "aws-node", [
    { name: "aws-node", image: "602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni:v1.18.1" },
  ]),
  daemonSet("kube-system", "azure-cns", [
    { name: "cns-container", image: "mcr.microsoft.com/containernetworking/azure-cns:v1.6.13" },
  ]),
  daemonSet("kube-system", "kube-router", [
    {
      name: "kube-router",
      image: "docker.io/cloudnativelabs/kube-router:v2.6.1",
      args: ["--run-router=true", "--run-firewall=true", "--run-service-proxy=false"],
    },
  ]),
  daemonSet("monitoring", "node-exporter", [
    { name: "node-exporter", image: "quay.io/prometheus/node-exporter:v1.8.2" },
  ]),
];

const spec = {
  nodes: [node({ name: "node-a", kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" })],
  pods: [],
  daemonSets: [fixture<object>("kube-proxy-daemonset.kubeadm.json"), ...plugins],
};

async function report(over: Partial<typeof spec> & { forbidden?: string[] } = {}) {
  const api = await startApiServer({ ...spec, ...over });
  try {
    // No agents: the cluster checks need only the API. 1 is any port; nothing listens for agents here.
    const r = await collector(["report", ...fleetFlags(api.kubeconfig, 1), "--output", "json"]);
    return FleetReport.parse(JSON.parse(r.stdout));
  } finally {
    await api.stop();
  }
}

t.test("plugins read from the API: the Calico that breaks blocks, every plugin named", async (t) => {
  const rep = await report();
  const f = rep.clusterFindings.find((x) => x.id === ID);
  t.equal(f?.severity, "error");
  t.equal(f?.stage, "before", "kube-proxy is in ipvs mode: before the switch");
  t.equal(f?.blocksMigration, true);
  const lines = f?.evidence.plugins as string[];
  t.match(
    lines[0],
    /^calico-system\/calico-node: docker\.io\/calico\/node:v3\.27\.0 -> Calico v3\.27\.0: breaks/,
  );
  t.match(lines[0], /projectcalico\/calico#8025/);
  for (const want of [
    /kube-system\/cilium: quay\.io\/cilium\/cilium:v1\.15\.1@sha256:351d6685.*Cilium v1\.15\.1: unknown/,
    /kube-flannel\/kube-flannel-ds: ghcr\.io\/flannel-io\/flannel:v0\.24\.2 -> Flannel v0\.24\.2: unknown/,
    /kube-system\/aws-node: .*amazon-k8s-cni:v1\.18\.1 -> Amazon VPC CNI v1\.18\.1: works/,
    /kube-system\/azure-cns: mcr\.microsoft\.com\/containernetworking\/azure-cns:v1\.6\.13 -> Azure CNI v1\.6\.13: unknown/,
  ])
    t.ok(
      lines.some((l) => want.test(l)),
      `a line matches ${want}`,
    );
  const router = lines.find((l) => l.startsWith("kube-system/kube-router"));
  t.ok(router, "kube-router listed");
  t.notMatch(router, /own IPVS service proxy/, "--run-service-proxy=false on the DaemonSet");
  t.equal(lines.length, 6, "the node exporter is no network plugin");
  t.notOk(rep.cluster.gaps.some((g) => g.what.startsWith("daemonsets")));
});

t.test(
  "the DaemonSet list refused (403): not read, with the API's reason; kube-proxy's own read stands",
  async (t) => {
    const rep = await report({ forbidden: ["daemonsets:list"] });
    const f = rep.clusterFindings.find((x) => x.id === ID);
    t.equal(f?.severity, "warning");
    t.match(f?.title, /DaemonSets not read/);
    t.match(f?.evidence.reason, /HTTP 403.*cannot list resource "daemonsets" in API group "apps"/);
    t.match(rep.cluster.gaps, [{ what: "daemonsets (all namespaces)", reason: /HTTP 403/ }]);
    t.equal(rep.cluster.kubeProxyDaemonSet?.name, "kube-proxy", "the named get of kube-proxy still read");
  },
);
