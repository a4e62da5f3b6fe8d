// Runs the real probes an ipvs-connections judgement reads, from dist/ (build first: npm run build), in
// whatever network namespace it is started in, then the real rules over their facts with kube-proxy
// said to answer ipvs (its endpoints cannot run in the guest). Writes facts and findings to argv[2].
import { writeFileSync } from "node:fs";
import process from "node:process";
import { driverContext } from "./driver-context.mjs";
import { addressesProbe } from "../../dist/agent/probes/addresses.js";
import { ipvsProbe } from "../../dist/agent/probes/ipvs.js";
import { ipvsConnectionsProbe } from "../../dist/agent/probes/ipvs-connections.js";
import { kubeIpvs0Probe } from "../../dist/agent/probes/kube-ipvs0.js";
import { judge } from "../../dist/agent/rules/index.js";
import { NodeFacts } from "../../dist/agent/report/schema.js";

const ctx = driverContext();
const runs = {
  ipvs: await ipvsProbe.run(ctx, { forParity: false }),
  ipvsConnections: await ipvsConnectionsProbe.run(ctx),
  kubeIpvs0: await kubeIpvs0Probe.run(ctx),
  addresses: await addressesProbe.run(ctx, { nodeIPs: [] }),
};
const facts = NodeFacts.parse({
  ...Object.fromEntries(Object.entries(runs).map(([k, r]) => [k, r.ok ? r.facts : null])),
  proxyMode: { mode: "ipvs" },
});
const failed = new Map(Object.entries(runs).flatMap(([k, r]) => (r.ok ? [] : [[k, r.error]])));
const j = judge(facts, failed, Date.now() / 1000);
writeFileSync(
  process.argv[2],
  JSON.stringify({ runs, view: j.view.ipvsConnections, findings: j.findings, verdict: j.verdict }, null, 1),
);
