import type { ProbeName } from "../facts/sources.js";
import type { ParityOptions } from "./parity.js";
import type { OptionsOf } from "./registry.js";

/** What the agent's flags say that some probes need; each probe takes only its part (probeOptions). */
export interface ProbeSettings {
  /** kube-proxy's metrics address (/proxyMode, /configz, /metrics) and health address (/healthz). */
  kubeProxyMetricsUrl: string;
  kubeProxyHealthUrl: string;
  /** The node's primary addresses when the downward API gave them (status.hostIPs). */
  nodeIPs: readonly string[];
  /** The parity snapshot: its file, its age limit and this node's name; absent or null: off. */
  parity?: ParityOptions | null;
}

/** Every probe that declares options, with them: the compiler refuses one left out or given a wrong shape. */
export type ProbeOptions = {
  readonly [N in ProbeName as keyof OptionsOf<N> extends never ? never : N]: OptionsOf<N>;
};

/** The one place the agent's settings become each probe's own options. */
export function probeOptions(s: ProbeSettings): ProbeOptions {
  const metrics = { metricsUrl: s.kubeProxyMetricsUrl };
  const forParity = (s.parity ?? null) !== null;
  return {
    "kube-proxy-mode": metrics,
    "kube-proxy-configz": metrics,
    "kube-proxy-metrics": metrics,
    "kube-proxy-health": { healthUrl: s.kubeProxyHealthUrl },
    listeners: { metricsUrl: s.kubeProxyMetricsUrl, healthUrl: s.kubeProxyHealthUrl },
    addresses: { nodeIPs: s.nodeIPs },
    ipvs: { forParity },
    nftables: { forParity },
    parity: { snapshot: s.parity ?? null },
  };
}

/** The options to run `name` with: its own, or none for a probe that declares none. */
export function optionsFor(options: ProbeOptions, name: ProbeName): unknown {
  return (options as Partial<Record<ProbeName, unknown>>)[name] ?? {};
}
