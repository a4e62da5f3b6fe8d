// Runs the real IPVS-family probes from dist/ (build first: npx tsc -p .) in whatever network
// namespace it is started in, and writes their outcomes as JSON to argv[2].
import { writeFileSync } from "node:fs";
import process from "node:process";
import { driverContext } from "./driver-context.mjs";
import { ipsetsProbe } from "../../dist/agent/probes/ipsets.js";
import { ipvsProbe } from "../../dist/agent/probes/ipvs.js";
import { kubeIpvs0Probe } from "../../dist/agent/probes/kube-ipvs0.js";

const ctx = driverContext();
const out = {
  ipvs: await ipvsProbe.run(ctx, { forParity: false }),
  "kube-ipvs0": await kubeIpvs0Probe.run(ctx),
  ipsets: await ipsetsProbe.run(ctx),
};
writeFileSync(process.argv[2], JSON.stringify(out, null, 1));
