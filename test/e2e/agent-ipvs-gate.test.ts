// The agent in serve on an ipvs-mode node made of real kernel state in a fresh network namespace:
// kube-proxy's ipsets and a kube-ipvs0 link (down, as kube-proxy leaves its dummy) holding a Service IP (the host kernel has no IPVS,
// so /proc/net/ip_vs is absent there), next to the kube-proxy STAND-IN answering ipvs mode with its
// change counters and sync times. The deep reads are reused while nothing moves, and read again as
// soon as another program changes an ipset or kube-proxy reports a change it synced.
import { readFileSync } from "node:fs";
import t from "tap";
import { NodeReport } from "../../agent/report/schema.js";
import { netnsAvailable, NetNs } from "../helpers/netns.js";
import { startStandin } from "../helpers/standin.js";
import { agentBuilt, sample, startAgent } from "./agent-process.js";

const source = (f: string) =>
  readFileSync(new URL(`../fixtures/netfilter/sources/${f}`, import.meta.url), "utf8");

const skip =
  (!agentBuilt() && "run npm run build first") || (!netnsAvailable() && "cannot create network namespaces");

const GATED = ["ipvs", "addresses", "ipsets"] as const;

t.test(
  "serve reuses the ipvs-mode deep reads while kube-proxy and the node stand still",
  { skip },
  async (t) => {
    const ns = NetNs.create();
    t.teardown(() => ns.destroy());
    ns.must(["ip", "link", "set", "lo", "up"]);
    ns.ipsetRestore(source("ipvs-mode.ipset"));
    // kube-proxy makes a dummy link; this kernel has no dummy driver, and a veth left down stands in
    // (the agent reads the link's addresses and state, not its kind, for what this test checks).
    ns.must(["ip", "link", "add", "kube-ipvs0", "type", "veth", "peer", "name", "kipvs-peer"]);
    ns.must(["ip", "addr", "add", "10.96.0.1/32", "dev", "kube-ipvs0"]);
    // kube-proxy synced a few seconds ago (its periodic resync keeps moving that), and last queued a
    // sync a minute before it started: the state it made from every change it saw.
    const queued = Math.floor(Date.now() / 1000) - 60;
    const scenario = {
      mode: "ipvs",
      version: "v1.34.2",
      lastSync: { agoSeconds: 3 },
      lastQueued: { unix: queued },
      counters: {
        kubeproxy_sync_proxy_rules_service_changes_total: 21,
        kubeproxy_sync_proxy_rules_endpoint_changes_total: 57,
      },
    };
    const kp = await startStandin(scenario, ns.name);
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
    const done = () => agent.logs().filter((l) => l.msg === "scan complete").length;
    const report = async () => NodeReport.parse(JSON.parse((await agent.get("/report")).body));
    const src = (r: NodeReport, name: string) => r.sources?.find((x) => x.source === name);
    // The first report from a scan that started after `at` (a scan running across a change may not see it).
    const reportAfter = async (at: number) => {
      for (;;) {
        const r = await report();
        if (Date.parse(r.scannedAt) - r.scanDurationMs > at) return r;
        await agent.scans(done() + 1);
      }
    };
    const serviceIps = (r: NodeReport) => r.facts.kubeIpvs0?.addresses.map((a) => a.address) ?? [];

    await agent.scans(3);
    const steady = await report();
    t.equal(steady.phase, "ipvs");
    for (const name of GATED) {
      t.equal(src(steady, name)?.reused, true, `${name}: reused by a scan after the first (nothing moved)`);
      t.match(src(steady, name)?.why, /synced every Service and EndpointSlice change/);
    }
    t.match(src(steady, "ipvs-connections"), { reused: true, why: /at most every 300 s/ });
    t.same(steady.facts.ipsets?.nodePorts, ["TCP:30080"]);
    t.same(serviceIps(steady), ["10.96.0.1"]);
    const metrics = (await agent.get("/metrics")).body;
    for (const name of [...GATED, "ipvs-connections"])
      t.ok(
        sample(metrics, `proxyscope_source_age_seconds{source="${name}"}`) !== undefined,
        `${name}: its age is a metric`,
      );

    // Another program adds a NodePort: kube-proxy saw nothing, the ipsets' headers move.
    let changedAt = Date.now();
    ns.must(["ipset", "add", "KUBE-NODE-PORT-TCP", "30999"]);
    const afterIpset = await reportAfter(changedAt);
    t.same(afterIpset.facts.ipsets?.nodePorts, ["TCP:30080", "TCP:30999"], "the next scans see the member");
    const ipsetRead = src(afterIpset, "ipsets");
    t.ok(ipsetRead && Date.parse(ipsetRead.readAt) >= changedAt, "from a read taken after the change");

    // kube-proxy sees a Service, adds its IP to kube-ipvs0 (a link never set up: no fingerprint of it)
    // and syncs: its counter and its queued time move.
    ns.must(["ip", "addr", "add", "10.96.0.10/32", "dev", "kube-ipvs0"]);
    await kp.update({
      ...scenario,
      lastQueued: { unix: Math.floor(Date.now() / 1000) - 5 },
      counters: { ...scenario.counters, kubeproxy_sync_proxy_rules_service_changes_total: 22 },
    });
    changedAt = Date.now();
    const afterSync = await reportAfter(changedAt);
    t.same(serviceIps(afterSync), ["10.96.0.1", "10.96.0.10"], "the Service IP kube-proxy added");
    const addrRead = src(afterSync, "addresses");
    t.ok(addrRead && Date.parse(addrRead.readAt) >= changedAt, "from a read taken after kube-proxy's sync");

    // Changes pending in kube-proxy: doubt, so every scan reads.
    await kp.update({
      ...scenario,
      counters: { ...scenario.counters, kubeproxy_sync_proxy_rules_endpoint_changes_pending: 3 },
    });
    const pending = await reportAfter(Date.now());
    for (const name of GATED)
      t.match(
        src(pending, name),
        { reused: false, why: /in doubt: kube-proxy has 3 endpoint changes pending/ },
        `${name}: read while kube-proxy has changes pending`,
      );
  },
);
