import t from "tap";
import { EXIT } from "../../../common/exit-codes.js";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { ToolRunner } from "../../../agent/io/run.js";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { renderScan } from "../../../agent/server/rendered-scan.js";
import type { NodeReport } from "../../../agent/report/schema.js";
import { buildApp } from "../../../agent/server/app.js";
import { AgentState } from "../../../agent/server/state.js";
import { registerVerifyRoute } from "../../../agent/server/verify-route.js";
import { verifyReport } from "../../../agent/verify/run.js";
import { VerifyResult } from "../../../common/verify-result.js";
import { emptyFacts, noKernelState } from "../../helpers/facts.js";
import { reportOf } from "../../helpers/reports.js";
import { addresses } from "../../helpers/rules.js";

// GET /verify over the agent's last scan, with a real TCP listener standing in for the Service.
const report = (mode: string): NodeReport => ({
  ...reportOf(
    emptyFacts({
      ...noKernelState,
      proxyMode: { mode },
      // verify's NodePort line reads the node's addresses: unread, it would fail the verification
      addresses: addresses("10.0.0.1"),
      nftables: {
        tables: [],
        kubeProxyTableName: "kube-proxy",
        kubeProxy: [
          {
            family: "ip",
            name: "kube-proxy",
            sets: [],
            // no nodeport-ips set: kube-proxy accepts NodePorts on every local address
            nodePortIPs: null,
            chains: { total: 1, service: 0, endpoint: 0, external: 0, base: [] },
          },
        ],
        firewalls: [],
      },
      kubeProxyMetrics: {
        metrics: {
          kubeproxy_sync_proxy_rules_last_timestamp_seconds: {
            type: "gauge",
            value: Date.now() / 1000,
            series: 1,
            min: Date.now() / 1000,
            max: Date.now() / 1000,
          },
        },
        gitVersion: "v1.34.0",
        familyCount: 3,
      },
    }),
    {},
    new Date(),
  ),
  node: "n1",
});

t.test("GET /verify: 503 before a scan, then the check over the last scan, shared and reused", async (t) => {
  const listener = createServer((c) => c.end());
  await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
  t.teardown(() => listener.close());
  let connections = 0;
  listener.on("connection", () => connections++);
  const port = (listener.address() as AddressInfo).port;

  // One clock for the scans and the route, moved only by a scan: reuse is decided by the order of
  // events, not by how long the collector's CLI takes to start on a busy machine (REUSE_MS is 15 s).
  let clock = 1_000_000;
  const state = new AgentState(new AgentMetrics({ version: "0.1.0" }), () => clock);
  const app = buildApp(state, { lookupVirtualServer: async () => ({ status: "ipvs-absent" }) });
  const input = {
    hostRoot: "/",
    procRoot: "/proc",
    sysRoot: "/sys",
    tools: new ToolRunner(),
    kubeProxyMetricsUrl: "http://127.0.0.1:9",
    kubeProxyHealthUrl: "http://127.0.0.1:9",
    nodeIPs: [],
    callTimeoutMs: 60_000,
    probeTimeoutMs: 120_000,
  };
  const opts = {
    syncWindowS: 0,
    serviceAddress: `127.0.0.1:${port}`,
    skipConnect: false,
    connectTimeoutMs: 2000,
  };
  // In the agent the scan thread checks the report it last made (ScanThread.verify); here, the last recorded.
  let last: NodeReport | null = null;
  const record = async (r: NodeReport) => {
    last = r;
    clock += 1;
    state.record(await renderScan(r));
  };
  registerVerifyRoute(
    app,
    state,
    () => verifyReport(last!, input, opts),
    () => clock,
  );
  t.teardown(() => app.close());

  t.equal((await app.inject({ method: "GET", url: "/verify" })).statusCode, 503);

  await record(report("nftables"));
  const [a, b] = await Promise.all([
    app.inject({ method: "GET", url: "/verify" }),
    app.inject({ method: "GET", url: "/verify" }),
  ]);
  t.equal(a.statusCode, 200);
  const v = VerifyResult.parse(a.json());
  t.equal(v.passed, true, JSON.stringify(v.checks));
  t.same(b.json(), a.json(), "a caller arriving meanwhile shares the answer");
  t.equal(connections, 1, "one verification, one connect");
  const again = await app.inject({ method: "GET", url: "/verify" });
  t.same(again.json(), a.json(), "a fresh result is served again");
  t.equal(connections, 1);

  // The collector's `proxyscope verify --node` (built: needs `npx tsc -p .`) reads this route.
  await app.listen({ host: "127.0.0.1", port: 0 });
  const agentUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const cli = new URL("../../../dist/collector/cli.js", import.meta.url).pathname;
  const run = (...args: string[]) =>
    promisify(execFile)(process.execPath, [cli, "verify", ...args]).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
  const ok = await run("--node", "n1", "--agents", `n1=${agentUrl}`);
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /^proxy mode \(\/proxyMode\)\s+ok$/m);
  t.match(ok.stdout, /^verify n1: PASS$/m);
  const missing = await run("--node", "n2", "--agents", `n1=${agentUrl}`, "--kubeconfig", "/nonexistent");
  t.equal(missing.code, EXIT.noReport, "a node with no agent is an error, not a pass");

  await record(report("ipvs"));
  const after = VerifyResult.parse((await app.inject({ method: "GET", url: "/verify" })).json());
  t.equal(after.passed, false, "a newer scan is verified anew");
  t.equal(after.checks.find((c) => c.id === "proxy-mode")?.detail, 'kube-proxy answers "ipvs"');
  t.equal(connections, 2);
  const failed = await run("--node", "n1", "--agents", `n1=${agentUrl}`, "--output", "json");
  t.equal(failed.code, 1, "the collector exits 1 on a failing node");
  t.equal(VerifyResult.parse(JSON.parse(failed.stdout)).passed, false);
});
