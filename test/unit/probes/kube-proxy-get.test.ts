import t from "tap";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { kubeProxyMetricsProbe } from "../../../agent/probes/kube-proxy-metrics.js";
import { kubeProxyModeProbe } from "../../../agent/probes/kube-proxy-mode.js";
import { readIpvsGateKey } from "../../../agent/probes/ipvs-gate.js";
import { newScanShared } from "../../../agent/probes/scan-cache.js";
import { optionsOf, probeContext } from "../../helpers/probe-context.js";

// In `serve` the ipvs-mode gate reads kube-proxy's /proxyMode and /metrics before the deep reads, and
// the kube-proxy probes read the same two answers: one GET each a scan, never two. A real loopback
// server counts the requests.
const METRICS =
  "# TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds gauge\nkubeproxy_sync_proxy_rules_last_timestamp_seconds 1.7e9\n";
const asked = new Map<string, number>();
const server = createServer((req, res) => {
  asked.set(req.url ?? "", (asked.get(req.url ?? "") ?? 0) + 1);
  res.end(req.url === "/proxyMode" ? "ipvs" : METRICS);
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
t.teardown(() => new Promise<void>((r) => server.close(() => r())));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

t.test("the gate and both probes of one scan: one GET of each endpoint", async (t) => {
  asked.clear();
  const shared = newScanShared();
  const ctx = probeContext({ shared });
  await readIpvsGateKey(
    { sysRoot: ctx.sysRoot, tools: ctx.tools, kubeProxyMetricsUrl: url, callTimeoutMs: 60_000 },
    shared,
  );
  const [mode, metrics] = await Promise.all([
    kubeProxyModeProbe.run(ctx, optionsOf("kube-proxy-mode", { kubeProxyMetricsUrl: url })),
    kubeProxyMetricsProbe.run(ctx, optionsOf("kube-proxy-metrics", { kubeProxyMetricsUrl: url })),
  ]);
  t.match(mode, { ok: true, facts: { mode: "ipvs" } });
  t.equal(metrics.ok, true);
  t.same(Object.fromEntries(asked), { "/proxyMode": 1, "/metrics": 1 });
});

t.test("the next scan asks again: nothing is kept between scans", async (t) => {
  asked.clear();
  for (let scan = 0; scan < 2; scan++) {
    const ctx = probeContext({ shared: newScanShared() });
    await Promise.all([
      kubeProxyModeProbe.run(ctx, optionsOf("kube-proxy-mode", { kubeProxyMetricsUrl: url })),
      kubeProxyMetricsProbe.run(ctx, optionsOf("kube-proxy-metrics", { kubeProxyMetricsUrl: url })),
    ]);
  }
  t.same(Object.fromEntries(asked), { "/proxyMode": 2, "/metrics": 2 });
});
