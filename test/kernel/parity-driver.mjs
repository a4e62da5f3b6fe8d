// Runs the real parity probe from dist/ (build first: npx tsc -p .) in whatever network namespace it
// is started in: argv[2] the mode kube-proxy "answers" (the stand-in's part), argv[3] the snapshot
// file, argv[4] where to write the outcomes as JSON. kube-ipvs0 and ipsets run first, for real, as
// the parity probe needs them.
import { writeFileSync } from "node:fs";
import process from "node:process";
import { driverContext } from "./driver-context.mjs";
import { ipsetsProbe } from "../../dist/agent/probes/ipsets.js";
import { kubeIpvs0Probe } from "../../dist/agent/probes/kube-ipvs0.js";
import { parityProbe } from "../../dist/agent/probes/parity.js";

const [mode, path, out] = process.argv.slice(2);
const ctx = driverContext();
const prior = {
  "kube-proxy-mode": { ok: true, facts: { mode } },
  "kube-ipvs0": await kubeIpvs0Probe.run(ctx),
  ipsets: await ipsetsProbe.run(ctx),
};
const parity = await parityProbe.run(
  { ...ctx, prior },
  { snapshot: { path, maxAgeS: 86400, node: "node1" } },
);
writeFileSync(out, JSON.stringify({ ...prior, parity }, null, 1));
