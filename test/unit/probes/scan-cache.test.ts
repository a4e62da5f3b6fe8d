import t from "tap";
import { chainsFingerprint, ScanCache } from "../../../agent/probes/scan-cache.js";
import type { KubeProxyMetricsFacts } from "../../../agent/facts/kube-proxy.js";

// The fingerprint and reuse rules of agent/probes/scan-cache.ts on a clock the test moves.

function metrics(over: Record<string, number> = {}): KubeProxyMetricsFacts {
  const values: Record<string, number> = {
    kubeproxy_sync_proxy_rules_service_changes_total: 21,
    kubeproxy_sync_proxy_rules_endpoint_changes_total: 57,
    kubeproxy_sync_proxy_rules_service_changes_pending: 0,
    kubeproxy_sync_proxy_rules_endpoint_changes_pending: 0,
    kubeproxy_sync_proxy_rules_last_timestamp_seconds: 1000,
    ...over,
  };
  return {
    gitVersion: "v1.34.1",
    familyCount: 30,
    metrics: Object.fromEntries(
      Object.entries(values).map(([k, v]) => [k, { type: "gauge", value: v, series: 1, min: v, max: v }]),
    ),
  } as KubeProxyMetricsFacts;
}
const cheap = { declarations: ["map ip kube-proxy service-ips"], counts: ["ip kube-proxy service-ips 10"] };

t.test("unknown fingerprints: /metrics unread, a counter missing, changes pending", async (t) => {
  t.match(chainsFingerprint(null, cheap), { known: false, why: /not read/ });
  const m = metrics();
  delete m.metrics["kubeproxy_sync_proxy_rules_endpoint_changes_total"];
  t.match(chainsFingerprint(m, cheap), {
    known: false,
    why: /no kubeproxy_sync_proxy_rules_endpoint_changes_total/,
  });
  t.match(chainsFingerprint(metrics({ kubeproxy_sync_proxy_rules_service_changes_pending: 2 }), cheap), {
    known: false,
    why: /2 changes not synced yet/,
  });
  const c = new ScanCache(600_000, () => 2_000_000);
  c.store("nft-chains", chainsFingerprint(metrics(), cheap), ["x"], 1_999_000, 3);
  t.match(c.lookup("nft-chains", chainsFingerprint(null, cheap), 3), { hit: false, why: /unknown/ });
});

t.test("a cheap read that moved changes the fingerprint", async (t) => {
  const a = chainsFingerprint(metrics(), cheap);
  const b = chainsFingerprint(metrics(), { ...cheap, counts: ["ip kube-proxy service-ips 11"] });
  const c = chainsFingerprint(metrics({ kubeproxy_sync_proxy_rules_endpoint_changes_total: 58 }), cheap);
  t.ok(a.known && b.known && c.known);
  if (a.known && b.known && c.known) {
    t.not(a.key, b.key);
    t.not(a.key, c.key);
  }
});

t.test("a sync after the read: reused only once kube-proxy has settled", async (t) => {
  let now = 2_000_000; // ms; kube-proxy's timestamps are seconds on the same clock
  const c = new ScanCache(600_000, () => now);
  const fp = (lastSync: number) =>
    chainsFingerprint(metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: lastSync }), cheap);
  t.match(c.lookup("nft-chains", fp(1000), 3), { hit: false, why: /first read/ });
  c.store("nft-chains", fp(1000), ["read at 2000 s"], now, 3);
  now += 60_000;
  // kube-proxy synced after that read (its periodic sync), counters unchanged.
  t.match(c.lookup("nft-chains", fp(2030), 3), { hit: false, why: /synced 1 of 3/ });
  c.store("nft-chains", fp(2030), ["read at 2060 s"], now, 3);
  now += 60_000;
  t.match(c.lookup("nft-chains", fp(2090), 3), { hit: false, why: /synced 2 of 3/ });
  c.store("nft-chains", fp(2090), ["read at 2120 s"], now, 3);
  now += 60_000;
  t.match(c.lookup("nft-chains", fp(2150), 3), { hit: false, why: /synced 3 of 3|settled/ });
  c.store("nft-chains", fp(2150), ["read at 2180 s"], now, 3);
  now += 60_000;
  t.match(c.lookup("nft-chains", fp(2210), 3), { hit: true, value: ["read at 2180 s"] });
  now += 600_000;
  t.match(c.lookup("nft-chains", fp(2210), 3), { hit: false, why: /full-read interval/ });
});

t.test("a failed nftables sync or cleanup changes the fingerprint (the mode's own counters)", async (t) => {
  const before = chainsFingerprint(metrics(), cheap);
  for (const name of [
    "kubeproxy_sync_proxy_rules_nftables_sync_failures_total",
    "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total",
    "kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
  ]) {
    const after = chainsFingerprint(metrics({ [name]: 1 }), cheap);
    t.ok(before.known && after.known && before.key !== after.key, name);
  }
});
