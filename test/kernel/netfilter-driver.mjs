// Runs the real netfilter probes from dist/ (build first: npx tsc -p .) in whatever network
// namespace it is started in, and prints their outcomes as JSON. argv[2]: ctx.prior as JSON.
import process from "node:process";
import { driverContext } from "./driver-context.mjs";
import { iptablesProbe } from "../../dist/agent/probes/iptables.js";
import { nftablesProbe } from "../../dist/agent/probes/nftables.js";

const ctx = driverContext({ prior: JSON.parse(process.argv[2] ?? "{}") });
const out = {
  iptables: await iptablesProbe.run(ctx),
  nftables: await nftablesProbe.run(ctx, { forParity: false }),
};
process.stdout.write(JSON.stringify(out));
