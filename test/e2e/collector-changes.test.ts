// `proxyscope report --changes` end to end: the built CLI against the API server STAND-IN (its Services
// from test/fixtures/kubernetes/services.json) and an agent on loopback serving a NodeReport the real
// agent made, plus a node whose agent does not answer: what it would have said is "not known".
import t from "tap";
import { ServiceChanges } from "../../collector/plan/changes/schema.js";
import { freePort } from "../helpers/prometheus.js";
import {
  agentPod,
  collector,
  fleetFlags,
  node,
  realScan,
  startAgent,
  startApiServer,
} from "./collector-fleet.js";

const port = await freePort();
const ipvsA = await realScan("node-ipvs-a", "6.8.0-1015-aws", "ipvs");
const stop = await startAgent("127.0.0.11", port, { report: ipvsA });
t.teardown(stop);
const api = await startApiServer({
  nodes: [
    node({ name: "node-ipvs-a", kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" }),
    node({ name: "node-gone", kernel: "6.8.0-1015-aws", osImage: "Ubuntu 24.04.1 LTS" }),
  ],
  pods: [agentPod("node-ipvs-a", "127.0.0.11", 0), agentPod("node-gone", "127.0.0.12", 1)],
});
t.teardown(() => api.stop());
const base = ["report", "--changes", ...fleetFlags(api.kubeconfig, port, 20_000), "--concurrency", "2"];

t.test("JSON: the ETP-Local and the ClientIP-affinity Services with their lines", async (t) => {
  const r = await collector([...base, "--output", "json"]);
  t.equal(r.code, 0, r.stderr);
  const c = ServiceChanges.parse(JSON.parse(r.stdout));
  const of = (s: string, row: number) => c.lines.find((l) => l.service === s && l.row === row);
  // node-gone's agent never answered: the Service-wide rows name the ipvs node and say node-gone is not known.
  t.same(of("prod/ingress", 8)?.nodes, ["node-ipvs-a"], "ETP Local: in-cluster callers reach all endpoints");
  t.match(of("prod/ingress", 8)?.notKnown.join(" "), /node-gone: no usable report/);
  t.match(of("prod/ingress", 8)?.findingPage, /cluster-services-etp-local\.md$/);
  t.same(of("prod/api", 9)?.nodes, ["node-ipvs-a"], "ClientIP affinity becomes per endpoint");
  t.notOk(of("prod/web", 9), "no affinity line where there is none");
  // node-gone's agent never answered: a node-list row for it is not taken as "nothing there".
  const web1 = of("prod/web", 1);
  t.ok(web1, "a NodePort Service gets the NodePort row");
  t.match(web1?.notKnown.join(" "), /node-gone: no usable report/);
});

t.test("Markdown: the same Services, escaped, with the doc and finding links", async (t) => {
  const r = await collector([...base, "--output", "markdown"]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /\| prod\/ingress \| in-cluster callers/);
  t.match(r.stdout, /\| prod\/api \| ClientIP affinity/);
  t.match(r.stdout, /ipvs-to-nftables\.md#ipvs--nftables/);
});
