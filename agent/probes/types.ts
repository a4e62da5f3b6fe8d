import type { z } from "zod";
import type { ProbeError } from "../facts/probe-error.js";
import type { ToolRunner } from "../io/run.js";

export const PROBE_NAMES = [
  "kernel",
  "os-release",
  "nft-version",
  "kernel-modules",
  "sysctls",
  "addresses",
  "ipvs",
  "kube-ipvs0",
  "ipsets",
  "iptables",
  "nftables",
  "kube-proxy-mode",
  "kube-proxy-configz",
  "kube-proxy-metrics",
  "kube-proxy-health",
] as const;
export type ProbeName = (typeof PROBE_NAMES)[number];

export type ProbeOutcome<F> = { ok: true; facts: F } | { ok: false; error: ProbeError };

export interface ProbeContext {
  /** Where the host's filesystem is mounted ("/" on a bare node, "/host" in the DaemonSet). */
  hostRoot: string;
  /** The kernel's /proc and /sys as seen by this process (host network namespace in the DaemonSet). */
  procRoot: string;
  sysRoot: string;
  tools: ToolRunner;
  /** kube-proxy's metrics address (/proxyMode, /configz, /metrics) and health address (/healthz). */
  kubeProxyMetricsUrl: string;
  kubeProxyHealthUrl: string;
  /** The node's primary addresses when the downward API gave them (status.hostIPs). */
  nodeIPs: string[];
  /** Deadline for one external call or HTTP request inside a probe. */
  callTimeoutMs: number;
  /** Outcomes of the probes this one `needs`, already finished. */
  prior: Partial<Record<ProbeName, ProbeOutcome<unknown>>>;
}

export interface Probe<F> {
  name: ProbeName;
  /** Probes whose outcome this one reads from `ctx.prior`; they run first. */
  needs?: readonly ProbeName[];
  schema: z.ZodType<F>;
  run(ctx: ProbeContext): Promise<ProbeOutcome<F>>;
}
