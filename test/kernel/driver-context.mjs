// The probe context every kernel-test driver runs the real probes from dist/ with: the namespace it
// is started in, the real tools, kube-proxy's default addresses. `over` adds or replaces fields.
import { ToolRunner } from "../../dist/agent/io/run.js";

export function driverContext(over = {}) {
  return {
    hostRoot: "/",
    procRoot: "/proc",
    sysRoot: "/sys",
    tools: new ToolRunner(),
    kubeProxyMetricsUrl: "http://127.0.0.1:10249",
    kubeProxyHealthUrl: "http://127.0.0.1:10256",
    nodeIPs: [],
    callTimeoutMs: 30000,
    prior: {},
    ...over,
  };
}
