import { pino } from "pino";
import { listenError } from "../common/listen-error.js";
import type { AgentConfig } from "./config.js";
import { AgentMetrics } from "./metrics/agent-metrics.js";
import { buildApp } from "./server/app.js";
import { procIpvsLookup } from "./server/ipvs-lookup.js";
import { ScanLoop } from "./server/scan-loop.js";
import { containerMemoryLimit } from "./io/cgroup-memory.js";
import { ScanThread, scanThreadLimits } from "./server/scan-thread.js";
import { logScan } from "./server/scan-log.js";
import { AgentState } from "./server/state.js";
import { registerVerifyRoute } from "./server/verify-route.js";
import { verifyOptions } from "./verify/options.js";
import type { ScanInput } from "./scan.js";

// A scan still running at shutdown gets this long to finish; the kubelet's grace period is 30 s.
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * The node agent: listens first (so /healthz answers while the first scan runs), scans at once and
 * then every interval, and serves the last report until SIGTERM or SIGINT. Resolves with the exit code.
 */
export async function runServe(
  cfg: AgentConfig,
  input: ScanInput & { node: string; agentVersion: string },
): Promise<number> {
  const log = pino({ level: cfg.logLevel, base: { node: cfg.node } });
  // A bad web config stops the agent before it listens: serving without the protection asked for is worse.
  // web-config.ts (yaml, its zod schema) is loaded only where a web config is given.
  const security =
    cfg.webConfigFile === null
      ? null
      : await (await import("../common/web-config.js")).loadWebConfig(cfg.webConfigFile);
  for (const warning of security?.warnings ?? []) log.warn({ webConfig: security?.source }, warning);
  const state = new AgentState(new AgentMetrics({ version: input.agentVersion, processMetrics: true }));
  const app = buildApp(state, {
    logger: log,
    lookupVirtualServer: procIpvsLookup(cfg.procRoot),
    retryAfterS: Math.min(cfg.scanIntervalS, cfg.probeTimeoutMs / 1000),
    access: { security, detailFrom: cfg.detailFrom },
  });
  // Scans run on their own thread: parsing a 10,000-Service node's listings takes the CPU for
  // seconds, which on this thread would hold every /metrics and /report answer behind it. The
  // thread also renders every body and runs /verify over its report: this one only sends bytes.
  const { tools: _tools, ...plain } = input;
  // The scan thread's heap is sized to the container, so a runaway scan ends the thread, not the agent.
  const memory = await containerMemoryLimit();
  const limits = scanThreadLimits(memory.bytes);
  const thread = new ScanThread(
    {
      toolDirs: cfg.toolDirs,
      kubeProxyNftDir: cfg.kubeProxyNftDir,
      input: plain,
      fullReadIntervalS: cfg.fullReadIntervalS,
      ipvsConnIntervalS: cfg.ipvsConnIntervalS,
      verify: verifyOptions(cfg),
    },
    undefined,
    limits,
  );
  thread.onHeapRelease = (freedBytes) => {
    state.metrics.recordHeapRelease(freedBytes);
    log.debug({ freedBytes }, "scan thread gave a large read's garbage back");
  };
  registerVerifyRoute(app, state, () => thread.verify());
  try {
    await app.listen({ host: cfg.listenHost, port: cfg.listenPort });
  } catch (e) {
    // Nothing may stay behind a refused address: the scan thread and the tools it may have started.
    await thread.close();
    input.tools.close();
    await app.close().catch(() => undefined);
    throw listenError(e, cfg.listenHost, cfg.listenPort) ?? e;
  }
  const address = app.server.address();
  log.info(
    {
      port: typeof address === "object" && address !== null ? address.port : cfg.listenPort,
      host: cfg.listenHost,
      tls: security?.tls != null,
      basicAuth: (security?.users.size ?? 0) > 0,
      detailFrom: cfg.detailFrom,
      maxConnections: app.server.maxConnections,
      scanIntervalS: cfg.scanIntervalS,
      version: input.agentVersion,
      containerMemoryLimitBytes: memory.bytes,
      containerMemoryLimitFrom: memory.from,
      scanThreadHeapMb: limits.maxOldGenerationSizeMb,
    },
    "listening",
  );

  const loop = new ScanLoop({
    // The thread keeps its previous report: cumulative failure counters are judged by what rose since.
    scan: () => thread.scan(),
    intervalMs: cfg.scanIntervalS * 1000,
    onScan: (scan) => {
      state.record(scan);
      logScan(log, scan.meta);
    },
    onOverrun: () => {
      state.metrics.recordOverrun();
      log.warn({ scanIntervalS: cfg.scanIntervalS }, "scan still running at the next tick; tick skipped");
    },
    onError: (e) => {
      state.metrics.recordScanFailure();
      log.error({ err: e }, "scan failed; the last report stays served");
    },
  });
  loop.start();

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  log.info({ signal }, "shutting down");
  await loop.stop(SHUTDOWN_GRACE_MS);
  await thread.close(); // a scan past the grace must not leave its tools running
  input.tools.close();
  await app.close();
  // A probe still running past the grace holds the event loop only until its own deadline; do not wait for it.
  setTimeout(() => process.exit(0), 1000).unref();
  log.info("stopped");
  return 0;
}
