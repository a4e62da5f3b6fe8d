import type { ClusterFacts } from "../report/cluster-facts.js";

// Which distribution runs the cluster, from what the API shows, and how each one wants kube-proxy's
// mode changed. Every marker is cited in test/profiles/upstream-facts.md §(i); a marker not found
// there is not used (an EKS kubeletVersion suffix, RKE2's providerID, AKS's kube-proxy shape).

export const DISTRIBUTIONS = [
  "eks",
  "aks",
  "gke",
  "kops",
  "k3s",
  "rke2",
  "talos",
  "kubeadm",
  "unknown",
] as const;
export type Distribution = (typeof DISTRIBUTIONS)[number];

interface Detected {
  name: Distribution;
  /** What gave it away, quoted from the API (bounded: one example per marker). */
  evidence: string[];
  /** The cloud a providerID names (aws, azure, gce, k3s's own): the cloud, not the distribution. */
  cloud: string | null;
}

const PROVIDER_CLOUDS: [prefix: string, cloud: string][] = [
  ["aws://", "aws"],
  ["azure://", "azure"],
  ["gce://", "gce"],
  ["k3s://", "k3s"],
];

export function detectDistribution(facts: ClusterFacts): Detected {
  const nodes = facts.nodes;
  const cloud = PROVIDER_CLOUDS.find(([p]) => nodes.some((n) => n.providerID?.startsWith(p)))?.[1] ?? null;
  const withVersion = (re: RegExp) => nodes.find((n) => re.test(n.kubeletVersion ?? ""));
  const withLabel = (...keys: string[]) =>
    nodes.flatMap((n) => keys.filter((k) => k in n.labels).map((k) => `node ${n.name} label ${k}`))[0];
  const hit = (name: Distribution, evidence: string): Detected => ({ name, evidence: [evidence], cloud });

  // Release versions carry the distribution: v1.34.2+k3s1, v1.36.1+rke2r1 (k3s/RKE2 READMEs).
  const k3s = withVersion(/\+k3s\d*$/);
  if (k3s) return hit("k3s", `node ${k3s.name} kubeletVersion ${k3s.kubeletVersion}`);
  const rke2 = withVersion(/\+rke2r\d*$/);
  if (rke2) return hit("rke2", `node ${rke2.name} kubeletVersion ${rke2.kubeletVersion}`);
  const dsLabels = facts.kubeProxyDaemonSet?.labels ?? {};
  if (dsLabels["eks.amazonaws.com/component"] === "kube-proxy")
    return hit("eks", "DaemonSet kube-proxy label eks.amazonaws.com/component: kube-proxy");
  const eksNode = withLabel("eks.amazonaws.com/nodegroup", "eks.amazonaws.com/compute-type");
  if (eksNode) return hit("eks", eksNode);
  const kopsNode = withLabel("kops.k8s.io/instancegroup");
  if (kopsNode) return hit("kops", kopsNode);
  const nodeup = facts.staticKubeProxy?.pods.find((p) => p.labels["kubernetes.io/managed-by"] === "nodeup");
  if (nodeup) return hit("kops", `mirror pod ${nodeup.name} label kubernetes.io/managed-by: nodeup`);
  // The kubelet's osImage is os-release's PRETTY_NAME: "Talos (v1.14.0)" (siderolabs/talos os-release).
  const talos = nodes.find((n) => /^Talos \(/.test(n.osImage ?? ""));
  if (talos) return hit("talos", `node ${talos.name} osImage ${talos.osImage}`);
  const aks = withLabel("kubernetes.azure.com/cluster", "kubernetes.azure.com/agentpool");
  if (aks) return hit("aks", aks);
  const gke = withLabel("cloud.google.com/gke-nodepool");
  if (gke) return hit("gke", gke);
  if (facts.kubeadm) return hit("kubeadm", "ConfigMap kube-system/kubeadm-config exists");
  return { name: "unknown", evidence: cloud ? [`providerID names the ${cloud} cloud`] : [], cloud };
}

/** Where a ConfigMap holds kube-proxy's config, for the remedies that edit it. */
export interface ConfigPlace {
  configMap: string;
  key: string | null;
}

/**
 * How to pin (or change) kube-proxy's mode in the distribution's own terms. `place` is the ConfigMap
 * --config was followed to, when there is one.
 */
export function modeRemedy(d: Distribution, mode: string, place: ConfigPlace | null): string {
  const cm = place
    ? `kubectl -n kube-system edit configmap ${place.configMap} (mode: "${mode}" in key ${place.key ?? "(its config key)"}), then restart kube-proxy's pods one node at a time`
    : null;
  switch (d) {
    case "eks":
      // re:Post knowledge-center eks-configure-ipvs-kube-proxy: managed vs self-managed add-on.
      return `Managed add-on (aws eks list-addons --cluster-name CLUSTER lists kube-proxy): aws eks update-addon --cluster-name CLUSTER --addon-name kube-proxy --configuration-values '{"mode":"${mode}"}' --resolve-conflicts OVERWRITE. Self-managed: ${cm ?? "kubectl -n kube-system edit configmap kube-proxy-config (key config)"}`;
    case "k3s":
      return `On every node, /etc/rancher/k3s/config.yaml: kube-proxy-arg: ["proxy-mode=${mode}"] (the --kube-proxy-arg flag), then restart k3s (systemctl restart k3s, or k3s-agent on agents) one node at a time`;
    case "rke2":
      return `On every node, /etc/rancher/rke2/config.yaml: kube-proxy-arg: ["proxy-mode=${mode}"], then restart rke2 (systemctl restart rke2-server, or rke2-agent) one node at a time: RKE2 rewrites its kube-proxy static pod`;
    case "kops":
      return `kops edit cluster: spec.kubeProxy.proxyMode: ${mode}; then kops update cluster --yes and kops rolling-update cluster --yes (kOps renders kube-proxy's static pod from the cluster spec)`;
    case "aks":
      return `az aks update --resource-group RG --name CLUSTER --kube-proxy-config kube-proxy.json with {"enabled": true, "mode": "${mode.toUpperCase()}"} (preview: KubeProxyConfigurationPreview; NFTABLES needs API 2025-09-02-preview)`;
    case "talos":
      return `Machine config cluster.proxy.mode: ${mode} on the control plane (talosctl edit mc, or talosctl patch mc with that patch): Talos re-renders its kube-proxy DaemonSet and ConfigMap`;
    case "gke":
      return `GKE manages kube-proxy itself; how to set its mode was not found in GKE's documentation (NOT ESTABLISHED): judge by the nodes' /proxyMode${cm ? `; the ConfigMap kube-proxy reads: ${cm}` : ""}`;
    case "kubeadm":
      return `${cm ?? `Set mode: "${mode}" in ConfigMap kube-system/kube-proxy (key config.conf)`}, and in the KubeProxyConfiguration you pass to kubeadm (kubeadm upgrade regenerates the ConfigMap)`;
    case "unknown":
      return (
        cm ??
        `Set --proxy-mode=${mode} (or mode: in the --config file) wherever this cluster starts kube-proxy`
      );
  }
}
