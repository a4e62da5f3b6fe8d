// A real-kernel scenario served over HTTP end to end: inside a fresh network namespace, kube-proxy's
// own nftables rules (1.34 layout) are loaded next to the ipvs-mode iptables chains and ipsets it left
// behind, the kube-proxy STAND-IN answers nftables mode, and the agent serves what it finds. Every
// request is made from inside the same namespace.
import { readFileSync } from "node:fs";
import t, { type Test } from "tap";
import { NodeReport } from "../../agent/report/schema.js";
import { netnsAvailable, NetNs } from "../helpers/netns.js";
import { startStandin } from "../helpers/standin.js";
import { agentBuilt, sample, startAgent } from "./agent-process.js";

const source = (f: string) =>
  readFileSync(new URL(`../fixtures/netfilter/sources/${f}`, import.meta.url), "utf8");
/** Chains a rules file declares (":KUBE-X - [0:0]"), table by table. */
const declaredChains = (rules: string) => rules.split("\n").filter((l) => l.startsWith(":KUBE-")).length;

const skip =
  (!agentBuilt() && "run npx tsc -p . first") || (!netnsAvailable() && "cannot create network namespaces");

/**
 * A fresh namespace with kube-proxy's 1.34 nftables table and kubelet's iptables-nft rules (plus what
 * `more` loads), the kube-proxy stand-in answering nftables mode, and the agent serving from inside it.
 */
async function servedNode(t: Test, more: (ns: NetNs) => void = () => {}) {
  const ns = NetNs.create();
  t.teardown(() => ns.destroy());
  ns.must(["ip", "link", "set", "lo", "up"]);
  ns.loadNft(source("kube-proxy-nft-v1.34-ip.nft"));
  ns.iptablesRestore(source("kubelet.rules"), "nft", "ipv4");
  more(ns);
  const kp = await startStandin(
    { mode: "nftables", version: "v1.34.2", lastSync: { agoSeconds: 3 } },
    ns.name,
  );
  t.teardown(() => kp.stop());
  const agent = await startAgent({
    netns: ns.name,
    args: [
      "--scan-interval-s",
      "1",
      "--kube-proxy-metrics-url",
      kp.metricsUrl,
      "--kube-proxy-health-url",
      kp.healthUrl,
    ],
  });
  t.teardown(() => agent.stop());
  return { ns, agent };
}

t.test("nftables-mode node with ipvs leftovers, served from inside its namespace", { skip }, async (t) => {
  const ipvsRules = source("kube-proxy-ipvs-mode.rules");
  const kubeSets = source("ipvs-mode.ipset")
    .split("\n")
    .filter((l) => l.startsWith("create KUBE-")).length;
  // kube-proxy's ipvs-mode leftovers: its ipsets first, since its rules match them.
  const { agent } = await servedNode(t, (ns) => {
    ns.ipsetRestore(source("ipvs-mode.ipset"));
    ns.iptablesRestore(ipvsRules, "nft", "ipv4");
  });
  await agent.scans(2);

  const res = await agent.get("/report");
  t.equal(res.status, 200);
  t.match(res.headers["x-report-age-seconds"], /^\d+\.\d{3}$/);
  const report = NodeReport.parse(JSON.parse(res.body));
  t.equal(report.phase, "nftables");
  t.equal(report.phaseSource, "proxyMode");
  t.same(
    report.facts.nftables?.kubeProxy.map((x) => [x.family, x.name]),
    [["ip", "kube-proxy"]],
    "the kube-proxy table loaded in the namespace, and only it",
  );
  t.ok(
    report.mixed.some((m) => m.mode === "ipvs"),
    "the ipvs-mode leftovers are seen as a second mode's state",
  );
  t.ok(report.findings.some((f) => f.id === "ipvs-iptables-chains-left"));
  t.equal(report.verdict, "leftovers");

  const metrics = (await agent.get("/metrics")).body;
  t.equal(sample(metrics, 'proxyscope_node_phase{phase="nftables"}'), "1");
  t.equal(sample(metrics, 'proxyscope_node_verdict{verdict="leftovers"}'), "1");
  t.equal(sample(metrics, 'proxyscope_nftables_kube_proxy_table_present{family="ip"}'), "1");
  t.equal(sample(metrics, 'proxyscope_nftables_kube_proxy_table_present{family="ip6"}'), "0");
  t.equal(
    sample(metrics, 'proxyscope_kube_proxy_iptables_chains{backend="nft",family="ipv4"}'),
    String(declaredChains(ipvsRules)),
    "every ipvs-mode chain counted, kubelet's left out",
  );
  t.equal(sample(metrics, 'proxyscope_finding{id="ipvs-iptables-chains-left",severity="warning"}'), "1");
  if (report.probes.some((p) => p.name === "ipsets" && p.ok)) {
    t.equal(sample(metrics, "proxyscope_kube_proxy_ipsets"), String(kubeSets));
  } else {
    t.comment("ipsets probe not registered yet: proxyscope_kube_proxy_ipsets not checked");
  }
  if (report.probes.some((p) => p.name === "ipvs" && p.ok)) {
    t.equal(sample(metrics, "proxyscope_ipvs_virtual_servers"), "0", "the host kernel has no IPVS");
  }
  t.equal(sample(metrics, "proxyscope_scan_overruns_total") !== undefined, true);
  t.ok(Number(sample(metrics, "proxyscope_scans_total")) >= 2);

  const vs = await agent.get("/ipvs/virtual-server?protocol=TCP&address=10.96.0.10&port=53");
  t.equal(vs.status, 404);
  t.match(JSON.parse(vs.body), { error: /IPVS is not loaded/ });

  t.equal(await agent.stop(), 0, "SIGTERM: clean exit");
  t.ok(agent.logs().some((l) => l.msg === "stopped"));
});

t.test(
  "serve reuses the nf_tables reads while the generation stands still, and sees a change at once",
  { skip },
  async (t) => {
    const { ns, agent } = await servedNode(t);
    const done = () => agent.logs().filter((l) => l.msg === "scan complete").length;
    const report = async () => NodeReport.parse(JSON.parse((await agent.get("/report")).body));
    const chains = (r: NodeReport) =>
      r.facts.nftables?.kubeProxy.find((x) => x.family === "ip")?.chains.total;

    await agent.scans(3);
    const steady = await report();
    for (const name of ["nftables", "iptables-nft", "ip6tables-nft"]) {
      const s = steady.sources?.find((x) => x.source === name);
      t.equal(s?.reused, true, `${name}: reused by a scan after the first (the namespace stood still)`);
      t.match(s?.why, /generation has not moved/);
    }
    const before = chains(steady)!;
    t.ok(before > 0, "kube-proxy's chains counted");

    // Another program's chain in kube-proxy's table: no counter of kube-proxy's moves, the generation does.
    const changedAt = Date.now();
    ns.must(["nft", "add", "chain", "ip", "kube-proxy", "someone-elses-chain"]);
    await agent.scans(done() + 2);
    const after = await report();
    t.equal(chains(after), before + 1, "the next scan sees the chain");
    const src = after.sources?.find((x) => x.source === "nftables");
    t.ok(src && Date.parse(src.readAt) >= changedAt, "from a read taken after the change");

    const metrics = (await agent.get("/metrics")).body;
    t.ok(
      sample(metrics, 'proxyscope_source_age_seconds{source="nftables"}') !== undefined,
      "its age is a metric",
    );
  },
);
