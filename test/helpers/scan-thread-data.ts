// The scan thread's data for tests that run the real worker with probes of their own: one node, no
// kube-proxy (its URLs refuse), tools only from `dir`.
import type { ScanWorkerData } from "../../agent/server/scan-thread.js";

export function testWorkerData(dir: string, probesModule: string): ScanWorkerData {
  return {
    toolDirs: [dir],
    probesModule,
    input: {
      node: "node-a",
      agentVersion: "0.1.0",
      hostRoot: "/",
      procRoot: "/proc",
      sysRoot: "/sys",
      kubeProxyMetricsUrl: "http://127.0.0.1:1",
      kubeProxyHealthUrl: "http://127.0.0.1:1",
      nodeIPs: [],
      callTimeoutMs: 10_000,
      probeTimeoutMs: 200_000,
    },
    verify: { syncWindowS: 0, serviceAddress: null, skipConnect: true, connectTimeoutMs: 2000 },
  };
}
