import { setTimeout as sleep } from "node:timers/promises";
import type { KubeProxyMetricsFacts } from "../facts/kube-proxy.js";
import { tcpConnect } from "../io/tcp-connect.js";
import { PROBES } from "../probes/registry.js";
import type { NodeReport } from "../report/schema.js";
import { runProbes, scanNode, type ScanInput } from "../scan.js";
import {
  nodePortReachOf,
  verifyChecks,
  type ConnectInput,
  type MetricsReading,
  type NodePortConnectInput,
} from "./checks.js";
import { checkFails, type VerifyResult } from "../../common/verify-result.js";
import { formatHostPort, parseHostPort } from "../parse/service-address.js";

export interface VerifyOptions {
  /** Seconds between the two reads of kube-proxy's /metrics; 0 for one read that must show no failures. */
  syncWindowS: number;
  serviceAddress: string | null;
  skipConnect: boolean;
  connectTimeoutMs: number;
  /** nftables after the switch; ipvs after a rollback. Default nftables. */
  expectMode?: "nftables" | "ipvs";
  /** Connect to a NodePort on each node address: sends traffic, so only when asked. */
  nodePortConnect?: boolean;
}

/** Reads kube-proxy's /metrics again through the same registered probe the scan used. */
async function readMetricsAgain(input: ScanInput): Promise<MetricsReading> {
  const probe = PROBES.find((p) => p.name === "kube-proxy-metrics");
  const at = Date.now() / 1000;
  if (probe === undefined) return { facts: null, error: "no kube-proxy-metrics probe is registered", at };
  const [run] = await runProbes(input, [probe]);
  if (run === undefined || !run.outcome.ok) {
    return { facts: null, error: run?.outcome.ok === false ? run.outcome.error.message : "no answer", at };
  }
  return { facts: run.outcome.facts as KubeProxyMetricsFacts, error: null, at: Date.now() / 1000 };
}

async function connectStep(opts: VerifyOptions): Promise<ConnectInput> {
  if (opts.skipConnect) return { kind: "skipped" };
  const a = opts.serviceAddress === null ? null : parseHostPort(opts.serviceAddress);
  if (a === null) return { kind: "no-address" };
  return {
    kind: "done",
    address: formatHostPort(a),
    outcome: await tcpConnect(a.host, a.port, opts.connectTimeoutMs),
  };
}

// One connection per address, one after another: a handful of addresses, each bounded by the timeout.
async function nodePortConnectStep(report: NodeReport, opts: VerifyOptions): Promise<NodePortConnectInput> {
  if (opts.nodePortConnect !== true) return { kind: "not-asked" };
  const reach = nodePortReachOf(report);
  if (!reach.read || reach.connectPort === null) return { kind: "no-target" };
  const port = reach.connectPort;
  const results: { address: string; outcome: Awaited<ReturnType<typeof tcpConnect>> }[] = [];
  for (const a of reach.addresses)
    results.push({ address: a.address, outcome: await tcpConnect(a.address, port, opts.connectTimeoutMs) });
  return { kind: "done", port, results };
}

/** Checks a report already taken (the agent's last scan, or a fresh one) plus the two live steps. */
export async function verifyReport(
  report: NodeReport,
  input: ScanInput,
  opts: VerifyOptions,
): Promise<VerifyResult> {
  let second: MetricsReading | null = null;
  if (opts.syncWindowS > 0) {
    // The window runs from the scan's read: a report that is already old (the agent's last scan) waits no longer.
    const waitMs = Date.parse(report.scannedAt) + opts.syncWindowS * 1000 - Date.now();
    if (waitMs > 0) await sleep(waitMs);
    second = await readMetricsAgain(input);
  }
  const checks = verifyChecks({
    report,
    second,
    syncWindowS: opts.syncWindowS,
    connect: await connectStep(opts),
    nodePortConnect: await nodePortConnectStep(report, opts),
    expectMode: opts.expectMode ?? "nftables",
  });
  return {
    schemaVersion: "1",
    node: report.node,
    checkedAt: new Date().toISOString(),
    passed: !checks.some(checkFails),
    checks,
  };
}

export async function runVerify(
  input: ScanInput & { node: string; agentVersion: string },
  opts: VerifyOptions,
): Promise<VerifyResult> {
  return verifyReport(await scanNode(input), input, opts);
}
