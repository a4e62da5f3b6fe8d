import { randomBytes } from "node:crypto";
import type { V1Pod } from "@kubernetes/client-node";

/** The label every scan pod carries: `kubectl get pods -A -l app.kubernetes.io/component=scan-node`. */
export const SCAN_POD_LABELS = {
  "app.kubernetes.io/name": "proxyscope",
  "app.kubernetes.io/component": "scan-node",
  "app.kubernetes.io/managed-by": "proxyscope",
} as const;
export const SCAN_CONTAINER = "scan";

export interface ScanPodOptions {
  node: string;
  namespace: string;
  image: string;
  /** How long the pod may take, image pull included; the kubelet ends it a little after (activeDeadlineSeconds). */
  waitS: number;
  /** Deadline of each API call. */
  timeoutMs: number;
}

/** Pod names are DNS subdomains; the node's name is cut so the name stays a valid hostname label too. */
export function scanPodName(node: string, suffix = randomBytes(4).toString("hex").slice(0, 5)): string {
  const base = node
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, "-")
    .slice(0, 40)
    .replace(/-+$/, "");
  return `proxyscope-scan-${base}-${suffix}`;
}

/**
 * The pod `kubectl debug node/NODE --profile=sysadmin` makes (kubectl v0.37.0 pkg/cmd/debug/debug.go
 * generateNodeDebugPod: nodeName, restartPolicy Never, a toleration of every taint; profiles.go
 * sysadminProfile: privileged, the host's network and PID namespaces, hostPath / at /host), narrowed to
 * what a scan needs: / read-only, no host IPC, no service account token (the scan reads no API), and
 * the agent's one-shot scan as its only command. A pod kubectl leaves behind the kubelet ends here:
 * activeDeadlineSeconds, in case this process is killed before it can delete the pod.
 */
export function scanPodSpec(o: ScanPodOptions, name: string): V1Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: o.namespace, labels: { ...SCAN_POD_LABELS } },
    spec: {
      nodeName: o.node,
      restartPolicy: "Never",
      hostNetwork: true,
      hostPID: true,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      activeDeadlineSeconds: o.waitS + 60,
      terminationGracePeriodSeconds: 5,
      tolerations: [{ operator: "Exists" }],
      containers: [
        {
          name: SCAN_CONTAINER,
          image: o.image,
          imagePullPolicy: "IfNotPresent",
          args: ["scan", "--node", o.node, "--host-root", "/host", "-o", "json"],
          // The image runs as 10001; the probes read netfilter and IPVS state as root (docs/security.md).
          securityContext: { privileged: true, runAsUser: 0, runAsNonRoot: false },
          volumeMounts: [{ name: "host-root", mountPath: "/host", readOnly: true }],
        },
      ],
      volumes: [{ name: "host-root", hostPath: { path: "/" } }],
    },
  };
}
