import { kernelMajorMinor } from "../../agent/contract.js";

/**
 * Labels that name a rollout pool, most specific first: GKE's node pool, EKS managed node groups, AKS agent
 * pools, kOps instance groups (kOps sets kops.k8s.io/instancegroup on every node of an InstanceGroup since
 * kubernetes/kops#3783, pkg/nodelabels), Karpenter, generic; the instance type last, as a fallback.
 */
export const POOL_LABELS = [
  "cloud.google.com/gke-nodepool",
  "eks.amazonaws.com/nodegroup",
  "kubernetes.azure.com/agentpool",
  "agentpool",
  "kops.k8s.io/instancegroup",
  "karpenter.sh/nodepool",
  "node.kubernetes.io/pool",
  "nodepool",
  "node.kubernetes.io/instance-type",
] as const;

/** The rollout pool a node belongs to: its pool label, OS image and kernel line. */
export function poolOf(
  labels: Record<string, string>,
  osImage: string | null,
  kernel: string | null,
): string {
  const named = POOL_LABELS.map((k) => labels[k]).find((v) => v !== undefined && v !== "");
  const k = kernelMajorMinor(kernel);
  return [
    named ?? "(no pool label)",
    osImage ?? "(unknown OS)",
    k ? `${k.major}.${k.minor}` : "(unknown kernel)",
  ].join(" · ");
}
