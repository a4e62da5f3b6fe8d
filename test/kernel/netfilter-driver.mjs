// Runs the real netfilter probes from dist/ (build first: npx tsc -p .) in whatever network
// namespace it is started in, and prints their outcomes as JSON. argv[2]: ctx.prior as JSON.
import process from "node:process";
import { ToolRunner } from "../../dist/agent/io/run.js";
import { iptablesProbe } from "../../dist/agent/probes/iptables.js";
import { nftablesProbe } from "../../dist/agent/probes/nftables.js";

const ctx = {
  hostRoot: "/",
  procRoot: "/proc",
  sysRoot: "/sys",
  tools: new ToolRunner(),
  kubeProxyMetricsUrl: "http://127.0.0.1:10249",
  kubeProxyHealthUrl: "http://127.0.0.1:10256",
  nodeIPs: [],
  callTimeoutMs: 30000,
  prior: JSON.parse(process.argv[2] ?? "{}"),
};
const out = { iptables: await iptablesProbe.run(ctx), nftables: await nftablesProbe.run(ctx) };
process.stdout.write(JSON.stringify(out));
