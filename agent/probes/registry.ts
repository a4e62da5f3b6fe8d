import type { Probe } from "./types.js";
import { addressesProbe } from "./addresses.js";
import { ipsetsProbe } from "./ipsets.js";
import { iptablesProbe } from "./iptables.js";
import { ipvsProbe } from "./ipvs.js";
import { kernelModulesProbe } from "./kernel-modules.js";
import { kernelProbe } from "./kernel.js";
import { kubeIpvs0Probe } from "./kube-ipvs0.js";
import { kubeProxyConfigzProbe } from "./kube-proxy-configz.js";
import { kubeProxyHealthProbe } from "./kube-proxy-health.js";
import { kubeProxyMetricsProbe } from "./kube-proxy-metrics.js";
import { kubeProxyModeProbe } from "./kube-proxy-mode.js";
import { nftVersionProbe } from "./nft-version.js";
import { nftablesProbe } from "./nftables.js";
import { osReleaseProbe } from "./os-release.js";
import { sysctlsProbe } from "./sysctls.js";

// Every probe, registered in one place (node_exporter's collector registry, in miniature).
export const PROBES: readonly Probe<unknown>[] = [
  kernelProbe,
  osReleaseProbe,
  nftVersionProbe,
  kernelModulesProbe,
  sysctlsProbe,
  addressesProbe,
  ipvsProbe,
  kubeIpvs0Probe,
  ipsetsProbe,
  iptablesProbe,
  nftablesProbe,
  kubeProxyModeProbe,
  kubeProxyConfigzProbe,
  kubeProxyMetricsProbe,
  kubeProxyHealthProbe,
] as Probe<unknown>[];
