import t from "tap";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startStandin } from "../../helpers/standin.js";
import { REPO_ROOT } from "../../helpers/uml.js";

// The kube-proxy STAND-IN (test/standins/kube-proxy.ts) held to the REAL binary's answers, recorded at
// each release the suite runs for real (test/fixtures/kube-proxy/real/, README there): the same
// kubeproxy_* metric families for nftables mode (and ipvs mode at each release, iptables mode at v1.34.4,
// recorded in User-Mode Linux by test/kernel/real-kube-proxy-ipvs-uml.test.ts), the same /configz keys, the same
// /healthz JSON keys.
// Values differ (timestamps, counts); the shape is what the agent's parsers rest on.

/** What was recorded: the folder under test/fixtures/kube-proxy/real/, its release and its mode. */
const RECORDED = [
  { dir: "v1.31.14", version: "v1.31.14", mode: "nftables" },
  { dir: "v1.34.4", version: "v1.34.4", mode: "nftables" },
  { dir: "v1.37.2", version: "v1.37.2", mode: "nftables" },
  { dir: "v1.34.4-ipvs", version: "v1.34.4", mode: "ipvs" },
  { dir: "v1.31.14-ipvs", version: "v1.31.14", mode: "ipvs" },
  { dir: "v1.37.2-ipvs", version: "v1.37.2", mode: "ipvs" },
  { dir: "v1.34.4-iptables", version: "v1.34.4", mode: "iptables" },
] as const;

const real = (dir: string, file: string) =>
  readFileSync(join(REPO_ROOT, "test/fixtures/kube-proxy/real", dir, file), "utf8");

const families = (metrics: string) =>
  [...metrics.matchAll(/^# TYPE (kubeproxy_\S+) (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`).sort();

const configKeys = (configz: string) => {
  const all = JSON.parse(configz) as Record<string, Record<string, unknown>>;
  return Object.entries(all)
    .flatMap(([name, config]) => [name, ...Object.keys(config).map((k) => `${name}.${k}`)])
    .sort();
};

/** What the real answer has that the stand-in's lacks, and what the stand-in's has beyond it. */
const diff = (standin: string[], recorded: string[]) => ({
  missingFromStandin: recorded.filter((x) => !standin.includes(x)),
  notInReal: standin.filter((x) => !recorded.includes(x)),
});

/**
 * Differences this test found between the stand-in and the real binaries, kept here by name so that any
 * other difference fails, and a fix to the stand-in shows as this list going stale (then shorten it).
 */
const KNOWN_METRICS: Record<string, { missingFromStandin: string[]; notInReal: string[] }> = {
  "v1.31.14": { missingFromStandin: [], notInReal: [] },
  "v1.34.4-ipvs": { missingFromStandin: [], notInReal: [] },
  "v1.31.14-ipvs": { missingFromStandin: [], notInReal: [] },
  "v1.37.2-ipvs": { missingFromStandin: [], notInReal: [] },
  // A HistogramVec (ip_family label from v1.33) has no series and no TYPE line until its first
  // observation: the recorded run's syncs were all full ones, so the partial-sync histogram was not
  // there yet. The stand-in answers as a node that has made a partial sync.
  "v1.34.4-iptables": {
    missingFromStandin: [],
    notInReal: ["kubeproxy_sync_partial_proxy_rules_duration_seconds histogram"],
  },
  "v1.34.4": { missingFromStandin: [], notInReal: [] },
  // A custom collector (pkg/proxy/metrics/metrics_linux.go, nftables counters) that gives a sample only
  // when it read the kernel's counter: the recorded binary holds the name but gave none in the test's
  // namespace. The stand-in answers as a node where the read succeeds, the case the agent's rule reads.
  "v1.37.2": {
    missingFromStandin: [],
    notInReal: ["kubeproxy_nftables_localhost_nodeport_rejected_packets_total counter"],
  },
};
const none = { missingFromStandin: [], notInReal: [] };

const keys = (json: string) => Object.keys(JSON.parse(json) as object).sort();

for (const { dir, version, mode } of RECORDED) {
  t.test(`stand-in vs real kube-proxy ${version}, ${mode} mode`, async (t) => {
    const standin = await startStandin({
      mode,
      version,
      dualStack: true,
      nodeIPs: ["10.88.0.10", "fd00:88::10"],
      healthy: true,
      nodeEligible: true,
      lastSync: { agoSeconds: 1 },
      lastQueued: { agoSeconds: 1 },
    });
    t.teardown(() => standin.stop());
    const get = async (url: string) => (await fetch(url)).text();
    t.equal(await get(`${standin.metricsUrl}/proxyMode`), real(dir, "proxyMode.txt"), "/proxyMode");
    t.same(
      diff(families(await get(`${standin.metricsUrl}/metrics`)), families(real(dir, "metrics.txt"))),
      KNOWN_METRICS[dir],
      "the kubeproxy_* metric families and their types",
    );
    t.same(
      diff(configKeys(await get(`${standin.metricsUrl}/configz`)), configKeys(real(dir, "configz.json"))),
      none,
      "/configz keys",
    );
    t.same(
      diff(keys(await get(`${standin.healthUrl}/healthz`)), keys(real(dir, "healthz.txt"))),
      none,
      "/healthz JSON keys",
    );
  });
}
