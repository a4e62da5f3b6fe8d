import {
  FACT_KEY,
  factSchema,
  type FactKey,
  type FactsOf,
  type ProbeName,
  type ProbeOutcome,
} from "../facts/sources.js";
import { countConntrackFlows, type CountFlows } from "../io/conntrack-flows.js";
import type { ToolRunner } from "../io/run.js";
import type { ScanCache, ScanShared } from "./scan-cache.js";
import type { z } from "zod";

export type { ProbeName, ProbeOutcome };

/** What every probe is given: where the host is, how to run its tools, and the scan's shared state. */
export interface ProbeContext {
  /** Where the host's filesystem is mounted ("/" on a bare node, "/host" in the DaemonSet). */
  hostRoot: string;
  /** The kernel's /proc and /sys as seen by this process (host network namespace in the DaemonSet). */
  procRoot: string;
  sysRoot: string;
  tools: ToolRunner;
  /** Deadline for one external call or HTTP request inside a probe. */
  callTimeoutMs: number;
  /** What a long-running agent keeps between scans (serve); absent or null: read everything. */
  cache?: ScanCache | null;
  /** What this scan's probes share (one listing read once, and how fresh each source is). */
  shared?: ScanShared;
  /** Outcomes of the probes this one `needs`, already finished. */
  prior: Partial<Record<ProbeName, ProbeOutcome<unknown>>>;
}

/** The options of a probe that takes none. */
type NoOptions = Record<never, never>;

/** A probe without options may be run without them; one with options must be given them. */
type OptionsArg<O> = keyof O extends never ? [options?: O] : [options: O];

/**
 * A probe's own options (kube-proxy's addresses, the parity snapshot, ...) are declared in its file, as
 * the type of its `run`'s second parameter: the compiler refuses a probe reading an option it did not
 * declare. probes/options.ts builds every probe's options from the agent's settings in one place.
 */
export interface Probe<F, O = NoOptions> {
  name: ProbeName;
  /** Where its facts go in the report, and their schema: both from facts/sources.ts. */
  factKey: FactKey;
  schema: z.ZodType<F>;
  /** Probes whose outcome this one reads from `ctx.prior`; they run first. */
  needs?: readonly ProbeName[];
  /**
   * Its facts are built only from typed parser output (10,000-entry lists at 10,000 Services): the scan
   * does not check them against the schema again (~60 ms of a one-shot scan); its tests do.
   */
  typedByParser?: true;
  /** It counts flows in nf_conntrack: the scan reads the table once for every such probe of a wave. */
  readsConntrack?: true;
  run(ctx: ProbeContext, ...options: OptionsArg<O>): Promise<ProbeOutcome<F>>;
}

/** A probe named in facts/sources.ts: its facts' key and schema come from there, typed by its name. */
export function defineProbe<N extends ProbeName, O = NoOptions>(
  name: N,
  def: {
    needs?: readonly ProbeName[];
    typedByParser?: true;
    readsConntrack?: true;
    run(ctx: ProbeContext, options: O): Promise<ProbeOutcome<FactsOf<N>>>;
  },
): Probe<FactsOf<N>, O> {
  return {
    name,
    factKey: FACT_KEY[name],
    schema: factSchema(name) as unknown as z.ZodType<FactsOf<N>>,
    ...(def.needs === undefined ? {} : { needs: def.needs }),
    ...(def.typedByParser === undefined ? {} : { typedByParser: def.typedByParser }),
    ...(def.readsConntrack === undefined ? {} : { readsConntrack: def.readsConntrack }),
    run: (ctx, ...options) => def.run(ctx, (options[0] ?? {}) as O),
  };
}

/** Probe `name`'s nf_conntrack counts: from its scan wave's one pass, or (run alone) a read of its own. */
export function conntrackCounter(ctx: ProbeContext, name: ProbeName, maxBytes: number): CountFlows {
  const pass = ctx.shared?.conntrack;
  return (keyOf) =>
    pass === undefined ? countConntrackFlows(ctx.procRoot, keyOf, maxBytes) : pass.count(name, keyOf);
}
