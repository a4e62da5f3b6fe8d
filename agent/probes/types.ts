import {
  FACT_KEY,
  factSchema,
  type FactKey,
  type FactsOf,
  type ProbeName,
  type ProbeOutcome,
} from "../facts/sources.js";
import type { ToolRunner } from "../io/run.js";
import type { ScanCache, ScanShared } from "./scan-cache.js";
import type { z } from "zod";

export type { ProbeName, ProbeOutcome };

export interface ParityOptions {
  path: string;
  maxAgeS: number;
  node: string;
}

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
  /** The parity snapshot: its file, its age limit and this node's name; absent: off. */
  parity?: ParityOptions | null;
  /** What a long-running agent keeps between scans (serve); absent or null: read everything. */
  cache?: ScanCache | null;
  /** What this scan's probes share (one listing read once, and how fresh each source is). */
  shared?: ScanShared;
  /** Outcomes of the probes this one `needs`, already finished. */
  prior: Partial<Record<ProbeName, ProbeOutcome<unknown>>>;
}

export interface Probe<F> {
  name: ProbeName;
  /** Where its facts go in the report, and their schema: both from facts/sources.ts. */
  factKey: FactKey;
  schema: z.ZodType<F>;
  /** Probes whose outcome this one reads from `ctx.prior`; they run first. */
  needs?: readonly ProbeName[];
  run(ctx: ProbeContext): Promise<ProbeOutcome<F>>;
}

/** A probe named in facts/sources.ts: its facts' key and schema come from there, typed by its name. */
export function defineProbe<N extends ProbeName>(
  name: N,
  def: {
    needs?: readonly ProbeName[];
    run(ctx: ProbeContext): Promise<ProbeOutcome<FactsOf<N>>>;
  },
): Probe<FactsOf<N>> {
  return {
    name,
    factKey: FACT_KEY[name],
    schema: factSchema(name) as unknown as z.ZodType<FactsOf<N>>,
    ...def,
  };
}
