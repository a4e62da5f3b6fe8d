import type { Logger } from "pino";
import { buildReport, factsFrom } from "../assemble/report.js";
import type { NodeReport } from "../report/schema.js";
import { runProbes, scanNode, type ScanInput } from "../scan.js";
import { executePlan } from "./execute.js";
import { applyAllowed } from "./interlock.js";
import { kubeProxyVerified } from "./listener-owner.js";
import { planCleanup } from "./plan.js";
import { readIpvsEvidence } from "./read-ipvs-evidence.js";
import { readRuleSets } from "./read-rules.js";
import type { CleanupOutcome, ScanSummary } from "./schema.js";

interface CleanupOptions {
  apply: boolean;
  strictArp: boolean;
  log: Logger;
}

function summarize(r: NodeReport): ScanSummary {
  return {
    verdict: r.verdict,
    phase: r.phase,
    findings: r.findings.map((f) => `${f.severity} ${f.id}`),
  };
}

/** Scan, plan, and (with --apply, past the interlock) act and scan again. */
export async function runCleanup(
  input: ScanInput & { node: string; agentVersion: string },
  opts: CleanupOptions,
): Promise<CleanupOutcome> {
  const startedAt = new Date();
  const runs = await runProbes(input);
  const report = buildReport(runs, {
    node: input.node,
    agentVersion: input.agentVersion,
    startedAt,
    finishedAt: new Date(),
  });
  // Plan from uncut facts: a report bounded for the wire lists only 200 virtual servers.
  const full: NodeReport = { ...report, facts: factsFrom(runs), truncated: {} };
  const ruleSets = await readRuleSets(full, input.tools, input.callTimeoutMs);
  const ipvsEvidence = await readIpvsEvidence(full, input.procRoot, input.tools, input.callTimeoutMs);
  const plan = planCleanup(full, ruleSets, { strictArp: opts.strictArp, ipvsEvidence });
  const base = {
    schemaVersion: "1" as const,
    node: input.node,
    before: summarize(report),
    plan,
    results: [],
    after: null,
  };
  if (!opts.apply) return { ...base, mode: "dry-run", refusal: null };
  const said = applyAllowed(report);
  // Only once kube-proxy's word is nftables: is it kube-proxy that said it?
  const gate = said.ok
    ? await kubeProxyVerified(report, {
        procRoot: input.procRoot,
        metricsUrl: input.kubeProxyMetricsUrl,
        timeoutMs: input.callTimeoutMs,
      })
    : said;
  if (!gate.ok) {
    opts.log.warn({ reason: gate.reason }, "cleanup refused");
    return { ...base, mode: "refused", refusal: gate.reason };
  }
  const results = await executePlan(plan.actions, {
    tools: input.tools,
    procRoot: input.procRoot,
    timeoutMs: input.callTimeoutMs,
    log: opts.log,
  });
  const after = await scanNode(input);
  return { ...base, mode: "applied", refusal: null, results, after: summarize(after) };
}
