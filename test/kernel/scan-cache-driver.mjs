// Runs the real nftables probe from dist/ (build first) several times with one ScanCache, in
// whatever network namespace it is started in, changing the kernel's rules between scans with the
// real nft (issue #14: what is cached must never make a finding stale). argv[2]: a directory with
// add-service.nft, add-port.nft, foreign-chain.nft and foreign-element.nft; argv[3]: where to write
// each scan's outcome as JSON. The iptables probe runs beside it in every scan (its read is not gated:
// nothing cheap sees another program's iptables-nft rules), and another program's rule is added to
// iptables-nft's filter table with the real iptables-nft between two scans.
// kube-proxy's /metrics is the stand-in's part here: its counters are given as the probe's prior.
import { writeFileSync } from "node:fs";
import process from "node:process";
import { driverContext } from "./driver-context.mjs";
import { spawnSync } from "node:child_process";
import { iptablesProbe } from "../../dist/agent/probes/iptables.js";
import { nftablesProbe } from "../../dist/agent/probes/nftables.js";
import { newScanShared, ScanCache } from "../../dist/agent/probes/scan-cache.js";

const [dir, out] = process.argv.slice(2);
const ctx = driverContext();
// The cache's clock is the test's: the full-read interval passes when the test says so, never by waiting.
let now = Date.now();
const cache = new ScanCache(600_000, () => now);
const counters = { service: 21, endpoint: 57, lastSync: Math.floor(now / 1000) - 100 };
const metricsFacts = () => ({
  gitVersion: "v1.34.1",
  familyCount: 40,
  metrics: Object.fromEntries(
    [
      ["kubeproxy_sync_proxy_rules_service_changes_total", "counter", counters.service],
      ["kubeproxy_sync_proxy_rules_endpoint_changes_total", "counter", counters.endpoint],
      ["kubeproxy_sync_proxy_rules_service_changes_pending", "gauge", 0],
      ["kubeproxy_sync_proxy_rules_endpoint_changes_pending", "gauge", 0],
      ["kubeproxy_sync_proxy_rules_last_timestamp_seconds", "gauge", counters.lastSync],
    ].map(([name, type, value]) => [name, { type, value, series: 1, min: value, max: value }]),
  ),
});

const scans = [];
async function scan(label, metricsRead = true) {
  const shared = newScanShared();
  const prior = {
    "kube-proxy-configz": { ok: false, error: { kind: "exec-failed", message: "not asked" } },
    "kube-proxy-metrics": metricsRead
      ? { ok: true, facts: metricsFacts() }
      : { ok: false, error: { kind: "exec-failed", message: "connection refused" } },
  };
  const outcome = await nftablesProbe.run({ ...ctx, cache, shared, prior });
  const kp = outcome.ok ? outcome.facts.kubeProxy.find((t) => t.family === "ip") : null;
  const ipt = await iptablesProbe.run({ ...ctx, cache, shared, prior });
  const nft4 = ipt.ok ? ipt.facts.backends.find((b) => b.backend === "nft" && b.family === "ipv4") : null;
  scans.push({
    label,
    ok: outcome.ok,
    chains: kp?.chains ?? null,
    serviceIps: kp?.sets.find((s) => s.name === "service-ips")?.elements ?? null,
    iptablesNftRules: nft4?.read ? nft4.totalRules : null,
    firewallChains: nft4?.read ? nft4.firewallChains : null,
    freshness: shared.freshness,
  });
}
async function nft(file) {
  const r = await ctx.tools.run("nft", ["-f", `${dir}/${file}`], { timeoutMs: 30000, maxBytes: 1 << 20 });
  if (!r.ok) throw new Error(`nft -f ${file}: ${r.error.message}`);
}

await scan("first");
await scan("unchanged");
// kube-proxy sees a new Service, programs it and says so in its counters and sync timestamp.
await nft("add-service.nft");
counters.service += 1;
counters.endpoint += 1;
counters.lastSync = Math.floor(now / 1000) + 1;
now += 10_000;
await scan("service added");
now += 10_000;
await scan("after the service, no sync since its read");
// A second port on svc1: one element more in service-ips and nothing else any cheap read sees (no
// new ClusterIP, no NodePort); kube-proxy counts the Service change and syncs.
await nft("add-port.nft");
counters.service += 1;
counters.lastSync = Math.floor(now / 1000) + 1;
now += 10_000;
await scan("port added, counters bumped");
// Another program (a host firewall) adds a chain and a rule to iptables-nft's filter table: none of
// kube-proxy's counters move.
const ipt = spawnSync("iptables-nft-restore", ["--noflush"], {
  input:
    "*filter\n:ufw-before-input - [0:0]\n-A INPUT -j ufw-before-input\n-A ufw-before-input -p tcp --dport 22 -j ACCEPT\nCOMMIT\n",
  encoding: "utf8",
});
if (ipt.status !== 0) throw new Error(`iptables-nft-restore: ${ipt.stderr}`);
now += 10_000;
await scan("another program's iptables-nft rule");
// Someone else's chain in kube-proxy's table: no counter of kube-proxy's moves.
await nft("foreign-chain.nft");
await nft("foreign-element.nft");
now += 10_000;
await scan("foreign chain, fingerprint blind");
now += 600_000;
await scan("full-read interval passed");
await scan("metrics unread", false);
writeFileSync(out, JSON.stringify(scans, null, 1));
