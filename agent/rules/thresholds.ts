import type { KernelFacts } from "../facts/host.js";
import { compareVersions } from "./input.js";

/** nftables mode has no partial support and no fallback below this kernel (KEP-3866; the guide). */
export const NFTABLES_MIN_KERNEL = [5, 13] as const;

export function kernelCanRunNftables(k: KernelFacts): boolean {
  return compareVersions([k.major, k.minor], NFTABLES_MIN_KERNEL) >= 0;
}

/** Every kube-proxy counter of a failed rule sync; the catalogue says which one a mode exports. */
export const SYNC_FAILURE_COUNTERS = [
  "kubeproxy_sync_proxy_rules_nftables_sync_failures_total",
  "kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
  "kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total",
] as const;

export const CLEANUP_FAILURE_COUNTER = "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total";
