import t from "tap";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startStandin } from "../../helpers/standin.js";
import { REPO_ROOT } from "../../helpers/uml.js";

// The kube-proxy STAND-IN (test/standins/kube-proxy.ts) held to the REAL binary's answers, recorded at
// each release the suite runs for real (test/fixtures/kube-proxy/real/, README there): the same
// kubeproxy_* metric families for nftables mode, the same /configz keys, the same /healthz JSON keys.
// Values differ (timestamps, counts); the shape is what the agent's parsers rest on.

const VERSIONS = ["v1.31.14", "v1.34.4", "v1.37.2"];

const real = (version: string, file: string) =>
  readFileSync(join(REPO_ROOT, "test/fixtures/kube-proxy/real", version, file), "utf8");

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
const KNOWN: Record<string, Record<string, { missingFromStandin: string[]; notInReal: string[] }>> = {
  metrics: {
    "v1.31.14": {
      missingFromStandin: [
        "kubeproxy_sync_full_proxy_rules_duration_seconds histogram",
        "kubeproxy_sync_partial_proxy_rules_duration_seconds histogram",
      ],
      notInReal: [],
    },
    // From v1.33 the network-programming histogram carries ip_family and appears only once observed
    // (only EndpointSlices with a last-change-trigger-time annotation are: none here).
    "v1.34.4": {
      missingFromStandin: ["kubeproxy_sync_full_proxy_rules_duration_seconds histogram"],
      notInReal: ["kubeproxy_network_programming_duration_seconds histogram"],
    },
    "v1.37.2": {
      missingFromStandin: ["kubeproxy_sync_full_proxy_rules_duration_seconds histogram"],
      notInReal: [
        "kubeproxy_network_programming_duration_seconds histogram",
        "kubeproxy_nftables_localhost_nodeport_rejected_packets_total counter",
      ],
    },
  },
  configz: {
    "v1.31.14": {
      missingFromStandin: ["kubeproxy.config.k8s.io.ClientConnection", "kubeproxy.config.k8s.io.Logging"],
      notInReal: [],
    },
    "v1.34.4": {
      missingFromStandin: ["kubeproxy.config.k8s.io.ClientConnection", "kubeproxy.config.k8s.io.Logging"],
      notInReal: [],
    },
    "v1.37.2": {
      missingFromStandin: ["kubeproxy.config.k8s.io.clientConnection", "kubeproxy.config.k8s.io.logging"],
      notInReal: [],
    },
  },
};
const none = { missingFromStandin: [], notInReal: [] };

const keys = (json: string) => Object.keys(JSON.parse(json) as object).sort();

for (const version of VERSIONS) {
  t.test(`stand-in vs real kube-proxy ${version}, nftables mode`, async (t) => {
    const standin = await startStandin({
      mode: "nftables",
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
    t.equal(await get(`${standin.metricsUrl}/proxyMode`), real(version, "proxyMode.txt"), "/proxyMode");
    t.same(
      diff(families(await get(`${standin.metricsUrl}/metrics`)), families(real(version, "metrics.txt"))),
      KNOWN.metrics![version],
      "the kubeproxy_* metric families and their types",
    );
    t.same(
      diff(configKeys(await get(`${standin.metricsUrl}/configz`)), configKeys(real(version, "configz.json"))),
      KNOWN.configz![version],
      "/configz keys",
    );
    t.same(
      diff(keys(await get(`${standin.healthUrl}/healthz`)), keys(real(version, "healthz.txt"))),
      none,
      "/healthz JSON keys",
    );
  });
}
