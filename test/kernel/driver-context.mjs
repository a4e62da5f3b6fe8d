// The probe context every kernel-test driver runs the real probes from dist/ with: the namespace it
// is started in, the real tools. `over` adds or replaces fields. A probe's own options (kube-proxy's
// addresses, --node-ip, parity) are its run's second argument, given by each driver.
import { ToolRunner } from "../../dist/agent/io/run.js";

export function driverContext(over = {}) {
  return {
    hostRoot: "/",
    procRoot: "/proc",
    sysRoot: "/sys",
    tools: new ToolRunner(),
    callTimeoutMs: 30000,
    prior: {},
    ...over,
  };
}
