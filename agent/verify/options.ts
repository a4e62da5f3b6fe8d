import type { AgentConfig } from "../config.js";
import type { VerifyOptions } from "./run.js";

// Apart from command.ts so that `serve` passes these to the scan thread without loading verify's
// probes on the serving thread.
export function verifyOptions(cfg: AgentConfig): VerifyOptions {
  return {
    syncWindowS: cfg.syncWindowS,
    serviceAddress: cfg.serviceAddress,
    skipConnect: cfg.skipConnect,
    connectTimeoutMs: cfg.callTimeoutMs,
    expectMode: cfg.expectMode,
    nodePortConnect: cfg.nodePortConnect,
  };
}
