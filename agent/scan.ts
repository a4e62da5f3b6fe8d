import { buildReport } from "./assemble/report.js";
import { redactUrls } from "../common/redact.js";
import type { ProbeError } from "./facts/probe-error.js";
import type { ProbeRun } from "./facts/sources.js";
import { ConntrackPass } from "./io/conntrack-flows.js";
import { readNftGeneration } from "./io/nft-generation.js";
import { CONNTRACK_MAX_BYTES } from "./probes/listeners.js";
import type { ToolRunner } from "./io/run.js";
import { readIpvsGateKey } from "./probes/ipvs-gate.js";
import { PROBES } from "./probes/registry.js";
import { optionsFor, probeOptions, type ProbeSettings } from "./probes/options.js";
import type { Probe, ProbeContext, ProbeName, ProbeOutcome } from "./probes/types.js";
import { newScanShared, ScanCache, type ScanShared } from "./probes/scan-cache.js";
import type { NodeReport } from "./report/schema.js";
import type { RuleOptions } from "./view/options.js";

/** A scan's input: what every probe is given, and the settings each probe takes its own options from. */
export interface ScanInput extends ProbeSettings {
  hostRoot: string;
  procRoot: string;
  sysRoot: string;
  tools: ToolRunner;
  callTimeoutMs: number;
  /** Hard deadline for a whole probe, however many calls it makes. */
  probeTimeoutMs: number;
  /** Deep reads kept between scans (serve's scan thread); absent or null: every scan reads all. */
  cache?: ScanCache | null;
}

/** The deep reads a long-running agent keeps between scans; the serve loop's scan thread holds one. */
export function newScanCache(fullReadIntervalMs: number, ipvsConnIntervalMs = 0): ScanCache {
  return new ScanCache(fullReadIntervalMs, Date.now, ipvsConnIntervalMs);
}

/**
 * Runs every probe once. Probes without `needs` run concurrently; the rest run after what they need.
 * A probe that throws, hangs past its deadline or returns facts that fail its schema becomes a named
 * failure; it never takes another probe or the scan down.
 */
export async function runProbes(
  input: ScanInput,
  probes: readonly Probe<unknown>[] = PROBES,
  shared: ScanShared = newScanShared(),
): Promise<ProbeRun[]> {
  const results = new Map<ProbeName, ProbeRun>();
  const prior: ProbeContext["prior"] = {};
  const options = probeOptions(input);
  const base: Omit<ProbeContext, "prior"> = {
    hostRoot: input.hostRoot,
    procRoot: input.procRoot,
    sysRoot: input.sysRoot,
    tools: input.tools,
    callTimeoutMs: input.callTimeoutMs,
    cache: input.cache ?? null,
    shared,
  };
  let pending = [...probes];
  while (pending.length > 0) {
    const ready = pending.filter((p) =>
      (p.needs ?? []).every((n) => results.has(n) || !pending.some((q) => q.name === n)),
    );
    if (ready.length === 0)
      throw new Error(`probe dependency cycle among ${pending.map((p) => p.name).join(", ")}`);
    const readers = ready.filter((p) => p.readsConntrack === true).map((p) => p.name);
    const pass =
      readers.length === 0 ? undefined : new ConntrackPass(input.procRoot, CONNTRACK_MAX_BYTES, readers);
    shared.conntrack = pass;
    const wave = await Promise.all(
      ready.map((p) =>
        runOne(
          p,
          { ...base, prior: { ...prior } },
          optionsFor(options, p.name),
          input.probeTimeoutMs,
        ).finally(() => pass?.finished(p.name)),
      ),
    );
    for (const r of wave) {
      results.set(r.name, r);
      prior[r.name] = r.outcome;
    }
    pending = pending.filter((p) => !results.has(p.name));
  }
  return probes.map((p) => results.get(p.name)!);
}

async function runOne(
  probe: Probe<unknown, unknown>,
  ctx: ProbeContext,
  options: unknown,
  deadlineMs: number,
): Promise<ProbeRun> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<ProbeOutcome<unknown>>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          ok: false,
          error: { kind: "timeout", message: `probe ${probe.name} did not finish within ${deadlineMs} ms` },
        }),
      deadlineMs,
    );
  });
  let outcome: ProbeOutcome<unknown>;
  try {
    outcome = await Promise.race([
      probe.run(ctx, options).catch((e: unknown) => crashed(probe.name, e)),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
  if (outcome.ok && probe.typedByParser !== true) {
    // A probe's facts must match its own schema; a mismatch is our bug, reported rather than served.
    // A probe whose facts come only from typed parsers is held to its schema by its tests instead.
    const check = probe.schema.safeParse(outcome.facts);
    if (!check.success) {
      outcome = {
        ok: false,
        error: {
          kind: "garbage",
          message: `probe ${probe.name} produced facts outside its schema: ${check.error.message.slice(0, 300)}`,
        },
      };
    }
  }
  // A failure names its URL (kube-proxy's, with whatever the flag held): shown with secrets redacted.
  if (!outcome.ok) outcome = { ok: false, error: redactedError(outcome.error) };
  return { name: probe.name, outcome, durationMs: performance.now() - started };
}

function redactedError(e: ProbeError): ProbeError {
  return {
    ...e,
    message: redactUrls(e.message),
    ...(e.command === undefined ? {} : { command: redactUrls(e.command) }),
  };
}

function crashed(name: string, e: unknown): ProbeOutcome<unknown> {
  const error: ProbeError = {
    kind: "exec-failed",
    message: `probe ${name} crashed: ${(e as Error)?.message ?? String(e)}`,
  };
  return { ok: false, error };
}

/** One complete scan: probes, rules, report. Never throws for anything the node does. */
export async function scanNode(
  input: ScanInput & {
    node: string;
    agentVersion: string;
    previous?: NodeReport | null;
    ruleOptions?: RuleOptions;
  },
  probes: readonly Probe<unknown>[] = PROBES,
): Promise<NodeReport> {
  const startedAt = new Date();
  // The gates are read only where a cache can use them: a one-shot scan reads everything anyway.
  const gated = input.cache != null && input.cache.fullReadIntervalMs > 0;
  const shared = newScanShared(
    gated ? () => readNftGeneration(input.tools, input.callTimeoutMs) : undefined,
    gated ? (s) => readIpvsGateKey(input, s) : undefined,
  );
  const runs = await runProbes(input, probes, shared);
  const finishedAt = new Date();
  const report = buildReport(
    runs,
    {
      node: input.node,
      agentVersion: input.agentVersion,
      startedAt,
      finishedAt,
      previous: input.previous ?? null,
    },
    input.ruleOptions,
  );
  if (input.cache == null || shared.freshness.length === 0) return report;
  const sources = shared.freshness.map((f) => ({
    ...f,
    ageSeconds: Math.max(0, Math.round((finishedAt.getTime() - Date.parse(f.readAt)) / 100) / 10),
  }));
  return { ...report, sources };
}
