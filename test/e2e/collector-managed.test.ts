// Managed and packaged distributions, end to end: the official client against the
// API server STAND-IN serving each distribution's kube-proxy objects in their real shapes
// (test/fixtures/kubernetes/README.md says where each comes from), agents on loopback serving
// NodeReports the real agent made against the kube-proxy stand-in. What the report must get right:
// where kube-proxy's mode really comes from, never "not pinned" or "mode: is empty" for a config it
// did not read or that lives elsewhere, and the remedy in the distribution's own terms.
import t from "tap";
import { FleetReport } from "../../collector/report/schema.js";
import { freePort } from "../helpers/prometheus.js";
import {
  agentPod,
  collector,
  fleetFlags,
  fixture,
  node,
  realScan,
  startAgent,
  startApiServer,
  type ClusterSpec,
} from "./collector-fleet.js";

const port = await freePort();
const ipvsA = await realScan("node-a", "6.8.0-1015-aws", "ipvs");
const ipvsB = await realScan("node-b", "6.1.0-26-amd64", "ipvs");
const stops = await Promise.all([
  startAgent("127.0.0.41", port, { report: ipvsA }),
  startAgent("127.0.0.42", port, { report: ipvsB }),
]);
t.teardown(() => Promise.all(stops.map((s) => s())));
const pods = [agentPod("node-a", "127.0.0.41", 0), agentPod("node-b", "127.0.0.42", 1)];

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Node objects of one distribution: its kubelet version string, labels and providerID. */
function nodes(over: {
  kubeletVersion?: string;
  labels?: Record<string, string>;
  providerID?: (n: string) => string;
}) {
  return ["node-a", "node-b"].map((name) => {
    const n = node({
      name,
      kernel: "6.8.0-1015-aws",
      osImage: "Ubuntu 24.04.1 LTS",
      labels: over.labels,
    }) as Json;
    if (over.kubeletVersion) n.status.nodeInfo.kubeletVersion = over.kubeletVersion;
    if (over.providerID) n.spec = { ...(n.spec ?? {}), providerID: over.providerID(name) };
    return n;
  });
}

/** The kubelet's mirror of RKE2's kube-proxy static pod on one node (fixture template). */
function rke2Mirror(nodeName: string): Json {
  const text = JSON.stringify(fixture("kube-proxy-mirror-pod.rke2.template.json"))
    .replaceAll("NODEUID", `uid-node-${nodeName}`)
    .replaceAll("NODE", nodeName)
    .replaceAll('"UID"', `"uid-mirror-${nodeName}"`);
  return JSON.parse(text) as Json;
}

async function report(spec: Omit<ClusterSpec, "pods"> & { pods?: object[] }): Promise<FleetReport> {
  const api = await startApiServer({ ...spec, pods: [...pods, ...(spec.pods ?? [])] });
  try {
    const r = await collector(["report", ...fleetFlags(api.kubeconfig, port), "--output", "json"]);
    if (r.code !== 0) throw new Error(`collector exited ${r.code}: ${r.stderr}`);
    return FleetReport.parse(JSON.parse(r.stdout));
  } finally {
    await api.stop();
  }
}

const ids = (r: FleetReport) => r.clusterFindings.map((f) => f.id);
const source = (r: FleetReport) => r.clusterFindings.find((f) => f.id === "cluster-config-source");

t.test("kubeadm: --config followed to ConfigMap kube-proxy, key config.conf", async (t) => {
  const r = await report({ nodes: nodes({}) });
  t.equal(r.cluster.configuredMode, "ipvs");
  t.match(source(r), {
    severity: "info",
    evidence: { kind: "configmap", configMap: "kube-proxy", key: "config.conf", distribution: "kubeadm" },
  });
  t.notOk(ids(r).includes("cluster-proxy-mode-not-pinned"));
  t.match(r.plan[0], { status: "done", detail: /Pinned to ipvs/ });
});

/** An EKS cluster's objects: the add-on's DaemonSet and both ConfigMaps it mounts. */
const eks = () => ({
  nodes: nodes({
    labels: { "eks.amazonaws.com/nodegroup": "ng-1" },
    providerID: (n) => `aws:///eu-central-1a/i-0${Buffer.from(n).toString("hex").slice(0, 16)}`,
  }),
  daemonSets: [fixture<object>("kube-proxy-daemonset.eks.json")],
  configMaps: [
    fixture<object>("kube-proxy-configmap.eks-kubeconfig.json"),
    fixture<object>("kube-proxy-config.eks-ipvs.json"),
  ],
});

t.test("EKS: the DaemonSet's --config leads to kube-proxy-config/config, not kube-proxy", async (t) => {
  const r = await report(eks());
  t.equal(r.cluster.configuredMode, "ipvs", "mode: ipvs from kube-proxy-config's key config");
  t.match(r.cluster.kubeProxyConfigMap, {
    name: "kube-proxy-config",
    key: "config",
    config: { mode: "ipvs" },
  });
  t.notOk(ids(r).includes("cluster-proxy-mode-not-pinned"));
  t.notOk(
    ids(r).includes("cluster-kube-proxy-config-unreadable"),
    "the kubeconfig ConfigMap is not the config",
  );
  t.notOk(ids(r).includes("cluster-configmap-not-mounted"));
  t.ok(ids(r).includes("cluster-ipvs-mode-configured"));
  const s = source(r);
  t.match(s, {
    evidence: { kind: "configmap", configMap: "kube-proxy-config", key: "config", distribution: "eks" },
  });
  t.match(s?.remedy, /aws eks update-addon .*--addon-name kube-proxy .*--configuration-values/);
  t.match(s?.remedy, /kubectl -n kube-system edit configmap kube-proxy-config/, "self-managed add-on");
  t.match(r.plan[0], { status: "done", detail: /Pinned to ipvs/ });
  t.notMatch(JSON.stringify(r.clusterFindings), /config\.conf/, "no advice to edit kubeadm's key");
});

t.test("EKS, ConfigMap kube-proxy-config forbidden (403): unread, never 'not pinned'", async (t) => {
  const r = await report({ ...eks(), faults: { "configmaps/kube-proxy-config": 403 } });
  t.match(r.cluster.gaps, [{ what: "configmap kube-system/kube-proxy-config", reason: /HTTP 403/ }]);
  t.equal(r.cluster.configuredMode, null);
  t.notOk(ids(r).includes("cluster-proxy-mode-not-pinned"));
  t.notOk(ids(r).includes("cluster-kube-proxy-config-unreadable"));
  t.notOk(ids(r).includes("cluster-nodes-disagree-with-config"));
  t.match(source(r), {
    evidence: { kind: "configmap", configMap: "kube-proxy-config", key: "config", read: false },
  });
  t.match(r.plan[0], { status: "todo", detail: /could not be read/ });
  t.notMatch(r.plan[0]!.detail, /mode: is empty/);
});

t.test("k3s: no DaemonSet, no ConfigMap, nodes answering ipvs", async (t) => {
  const r = await report({
    nodes: nodes({
      kubeletVersion: "v1.34.2+k3s1",
      labels: { "node.kubernetes.io/instance-type": "k3s" },
      providerID: (n) => `k3s://${n}`,
    }),
    daemonSets: [],
    configMaps: [],
  });
  t.notOk(ids(r).includes("cluster-no-kube-proxy"), "the nodes answer /proxyMode: kube-proxy is there");
  t.notOk(ids(r).includes("cluster-proxy-mode-not-pinned"));
  const s = source(r);
  t.match(s, { evidence: { kind: "distribution", distribution: "k3s", nodesAnswered: ["ipvs=2"] } });
  t.match(s?.remedy, /\/etc\/rancher\/k3s\/config\.yaml/);
  t.match(s?.remedy, /kube-proxy-arg/);
  t.notMatch(r.plan[0]!.detail, /mode: is empty/);
  t.match(r.plan[0]!.detail, /k3s/);
  t.match(r.plan[0]!.detail, /ipvs/);
});

t.test("RKE2: kube-proxy as a static pod, seen through its mirror pods", async (t) => {
  const r = await report({
    nodes: nodes({ kubeletVersion: "v1.36.1+rke2r1" }),
    daemonSets: [],
    configMaps: [],
    pods: [
      rke2Mirror("node-a"),
      rke2Mirror("node-b"),
      // Same label, no kubernetes.io/config.mirror: a pod of something else, not a static pod.
      {
        ...rke2Mirror("node-a"),
        metadata: {
          name: "kube-proxy-lookalike",
          namespace: "kube-system",
          labels: { component: "kube-proxy" },
        },
      },
    ],
  });
  t.notOk(ids(r).includes("cluster-no-kube-proxy"));
  t.notOk(ids(r).includes("cluster-proxy-mode-not-pinned"));
  t.equal(r.cluster.configuredMode, "ipvs", "--proxy-mode=ipvs on the static pods");
  const s = source(r);
  t.match(s, {
    evidence: { kind: "static-pod", distribution: "rke2", proxyModeFlags: ["ipvs"], mirrorPods: 2 },
  });
  t.match(s?.remedy, /\/etc\/rancher\/rke2\/config\.yaml/);
  t.match(r.plan[0], { status: "done", detail: /ipvs/ });
  t.notMatch(r.plan[0]!.detail, /mode: is empty/);
});

// Settings the switch drops, read where kube-proxy reads them: kubeadm's ConfigMap as kubeadm renders it,
// with what a user tuned for ipvs mode (iptables.masqueradeAll for a CNI that needs it, a masquerade bit
// moved off 14, a longer ipvs.syncPeriod). nftables mode reads its own block (kubernetes v1.34.4
// pkg/proxy/apis/config/v1alpha1/conversion.go), so the fleet report must name each key and the
// `nftables:` line that keeps it, in kubeadm's terms; kubeadm's untouched rendering names nothing.
t.test("kubeadm: tuned keys nftables mode would not read, named with the line that keeps them", async (t) => {
  const cm = fixture<Json>("kube-proxy-configmap.kubeadm-ipvs.json");
  const untouched = await report({ nodes: nodes({}) });
  t.notOk(ids(untouched).includes("cluster-config-keys-not-carried"), "kubeadm's defaults carry nothing");
  const conf = (cm.data["config.conf"] as string)
    .replace(
      "  masqueradeAll: false\n  masqueradeBit: null\n  minSyncPeriod: 0s\n  syncPeriod: 0s\nipvs:",
      "  masqueradeAll: true\n  masqueradeBit: 13\n  minSyncPeriod: 0s\n  syncPeriod: 0s\nipvs:",
    )
    .replace(/(ipvs:\n(?: {2}.*\n)*? {2}syncPeriod: )0s/, "$11m0s");
  t.not(conf, cm.data["config.conf"], "the fixture was edited");
  const r = await report({
    nodes: nodes({}),
    configMaps: [
      { ...cm, data: { ...cm.data, "config.conf": conf } },
      fixture<object>("kubeadm-config.json"),
    ],
  });
  const f = r.clusterFindings.find((x) => x.id === "cluster-config-keys-not-carried");
  t.match(f, {
    severity: "warning",
    stage: "before",
    evidence: {
      mode: "ipvs",
      notCarried: ["iptables.masqueradeAll: true", "iptables.masqueradeBit: 13", "ipvs.syncPeriod: 1m0s"],
    },
  });
  t.match(f?.remedy, /ConfigMap kube-proxy \(key config\.conf\)/);
  t.match(f?.remedy, /nftables: \{masqueradeAll: true, masqueradeBit: 13, syncPeriod: 1m0s\}/);
  t.match(f?.remedy, /kubeadm/);
});
