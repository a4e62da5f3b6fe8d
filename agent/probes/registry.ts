import { PROBE_NAMES, type FactsOf, type ProbeName } from "../facts/sources.js";
import { addressesProbe } from "./addresses.js";
import { ipRulesProbe } from "./ip-rules.js";
import { ipsetsProbe } from "./ipsets.js";
import { iptablesProbe } from "./iptables.js";
import { ipvsProbe } from "./ipvs.js";
import { ipvsConnectionsProbe } from "./ipvs-connections.js";
import { kernelModulesProbe } from "./kernel-modules.js";
import { kernelProbe } from "./kernel.js";
import { kubeIpvs0Probe } from "./kube-ipvs0.js";
import { kubeProxyConfigzProbe } from "./kube-proxy-configz.js";
import { kubeProxyHealthProbe } from "./kube-proxy-health.js";
import { kubeProxyNftProbe } from "./kube-proxy-nft.js";
import { kubeProxyMetricsProbe } from "./kube-proxy-metrics.js";
import { kubeProxyModeProbe } from "./kube-proxy-mode.js";
import { listenersProbe } from "./listeners.js";
import { nftVersionProbe } from "./nft-version.js";
import { nftablesProbe } from "./nftables.js";
import { osReleaseProbe } from "./os-release.js";
import { parityProbe } from "./parity.js";
import { serviceConntrackProbe } from "./service-conntrack.js";
import { sysctlConfigProbe } from "./sysctl-config.js";
import { sysctlsProbe } from "./sysctls.js";
import type { Probe } from "./types.js";

// Every probe's reader, by the name facts/sources.ts gives it: the compiler refuses a name missing here.
// `satisfies`, not a type annotation: each probe's own options type stays readable (OptionsOf).
const READERS = {
  kernel: kernelProbe,
  "os-release": osReleaseProbe,
  "nft-version": nftVersionProbe,
  "kernel-modules": kernelModulesProbe,
  sysctls: sysctlsProbe,
  "sysctl-config": sysctlConfigProbe,
  addresses: addressesProbe,
  "ip-rules": ipRulesProbe,
  ipvs: ipvsProbe,
  "ipvs-connections": ipvsConnectionsProbe,
  "kube-ipvs0": kubeIpvs0Probe,
  ipsets: ipsetsProbe,
  iptables: iptablesProbe,
  nftables: nftablesProbe,
  "kube-proxy-nft": kubeProxyNftProbe,
  "kube-proxy-mode": kubeProxyModeProbe,
  "kube-proxy-configz": kubeProxyConfigzProbe,
  "kube-proxy-metrics": kubeProxyMetricsProbe,
  "kube-proxy-health": kubeProxyHealthProbe,
  parity: parityProbe,
  listeners: listenersProbe,
  "service-conntrack": serviceConntrackProbe,
} as const satisfies { readonly [N in ProbeName]: Probe<FactsOf<N>, never> };

/** The options the probe named N declares in its own file (NoOptions for one that takes none). */
export type OptionsOf<N extends ProbeName> =
  (typeof READERS)[N] extends Probe<FactsOf<N>, infer O> ? O : never;

/** Every probe, in the order of facts/sources.ts (node_exporter's collector registry, in miniature). */
export const PROBES: readonly Probe<unknown>[] = PROBE_NAMES.map((n) => READERS[n] as Probe<unknown>);
