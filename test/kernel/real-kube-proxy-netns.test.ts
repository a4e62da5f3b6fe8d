import t from "tap";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers/uml.js";
import { netnsAvailable, withNetns, type NetNs } from "../helpers/netns.js";
import { parseScanOutput, findingIds } from "../helpers/scan-report.js";
import { AGENT_CLI } from "../helpers/standin.js";
import {
  getIn,
  HEALTH,
  METRICS,
  NODE_NAME,
  realKubeProxy,
  startRealKubeProxy,
} from "../helpers/real-kube-proxy.js";
import { NODE_IP4, NODE_IP6, realCluster } from "../helpers/real-cluster.js";

// The REAL kube-proxy (test/kube-proxy/build.mjs builds it; `npm test` builds it first) in nftables mode
// in a network namespace, against the API server stand-in there, then the real agent's scan of what it
// made: kernel state and /proxyMode, /configz, /metrics all kube-proxy's own, none of it our reading of
// its source.

/** What differs between the releases, as each real binary answered (test/fixtures/kube-proxy/real/). */
const RELEASES: Record<string, { nodePortAddresses: string[]; syncSeries: number; healthShape: string }> = {
  // Before v1.33 no ip_family label (one series for both families) and /healthz in fmt's text shape;
  // nodePortAddresses unset meant "all addresses" and /configz says [].
  "v1.31.14": { nodePortAddresses: [], syncSeries: 1, healthShape: "legacy" },
  // The internal config /configz serves before v1.36 holds "primary" resolved to the node IPs' CIDRs.
  "v1.34.4": {
    nodePortAddresses: [`${NODE_IP4}/32`, `${NODE_IP6}/128`],
    syncSeries: 2,
    healthShape: "v1.33+",
  },
  // From v1.36 /configz serves the v1alpha1 type, which keeps the literal "primary".
  "v1.37.2": { nodePortAddresses: ["primary"], syncSeries: 2, healthShape: "v1.33+" },
};

function node(ns: NetNs): void {
  ns.must(["ip", "link", "set", "lo", "up"]);
  // A veth pair inside the namespace: the node's interface, its peer the wire (no dummy module here).
  ns.must(["ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth0p"]);
  ns.must(["ip", "link", "set", "eth0p", "up"]);
  ns.must(["ip", "addr", "add", `${NODE_IP4}/24`, "dev", "eth0"]);
  ns.must(["ip", "-6", "addr", "add", `${NODE_IP6}/64`, "dev", "eth0", "nodad"]);
  ns.must(["ip", "link", "set", "eth0", "up"]);
  ns.must(["ip", "route", "add", "default", "dev", "eth0"]);
  ns.must(["ip", "-6", "route", "add", "default", "dev", "eth0"]);
}

/**
 * RECORD_KUBE_PROXY=1: writes the real binary's answers to test/fixtures/kube-proxy/real/<version>/
 * (the README there), which test/unit/standins/kube-proxy-real-shape.test.ts holds the stand-in to.
 */
function record(ns: NetNs, version: string): void {
  const dir = join(REPO_ROOT, "test/fixtures/kube-proxy/real", version);
  mkdirSync(dir, { recursive: true });
  const answers: Record<string, { status: number; contentType: string }> = {};
  for (const [file, url] of [
    ["proxyMode.txt", `http://${METRICS}/proxyMode`],
    ["configz.json", `http://${METRICS}/configz`],
    ["metrics.txt", `http://${METRICS}/metrics`],
    ["healthz.txt", `http://${HEALTH}/healthz`],
    ["livez.txt", `http://${HEALTH}/livez`],
  ] as const) {
    const r = ns.must(["curl", "-sS", "-w", "\n%{http_code} %{content_type}", url]);
    const i = r.lastIndexOf("\n");
    const [status, ...ct] = r.slice(i + 1).split(" ");
    writeFileSync(join(dir, file), r.slice(0, i));
    answers[file] = { status: Number(status), contentType: ct.join(" ") };
  }
  writeFileSync(join(dir, "answers.json"), `${JSON.stringify(answers, null, 2)}\n`);
}

if (!netnsAvailable()) {
  t.fail("network namespaces are not available: this test needs root (CI runs as root)");
} else {
  for (const [VERSION, expect] of Object.entries(RELEASES)) {
    const bin = realKubeProxy(VERSION);
    if (bin === null) {
      t.fail(
        `kube-proxy ${VERSION} is not built: run \`node test/kube-proxy/build.mjs ${VERSION}\` (npm test does)`,
      );
      continue;
    }
    t.test(
      `real kube-proxy ${VERSION}, nftables mode, fresh node: the agent reads it and calls it clean`,
      (t) =>
        withNetns(async (ns) => {
          node(ns);
          const kp = await startRealKubeProxy(ns, bin, "nftables", realCluster(VERSION));
          try {
            if (process.env.RECORD_KUBE_PROXY === "1") record(ns, VERSION);
            // What kube-proxy made, before the agent looks: both families' tables with the Services in them.
            const ip = ns.must(["nft", "list", "table", "ip", "kube-proxy"]);
            const ip6 = ns.must(["nft", "list", "table", "ip6", "kube-proxy"]);
            t.match(ip, /10\.96\.0\.10/, "the ClusterIP is in kube-proxy's ip table");
            t.match(ip, /30080/, "the NodePort is in kube-proxy's ip table");
            t.match(ip6, /fd00:96::10/, "the IPv6 ClusterIP of the dual-stack Service is in the ip6 table");
            t.match(ip, /affinity/, "sessionAffinity ClientIP made its affinity set");

            const out = ns.runNode(AGENT_CLI, [
              "scan",
              "--json",
              "--node",
              NODE_NAME,
              "--kube-proxy-metrics-url",
              `http://${METRICS}`,
              "--kube-proxy-health-url",
              `http://${HEALTH}`,
            ]);
            t.equal(out.code, 0, `scan: ${out.stderr}`);
            const r = parseScanOutput(out.stdout);
            t.equal(r.phase, "nftables");
            t.equal(r.phaseSource, "proxyMode", "the mode is kube-proxy's own word");
            // A fresh nftables node: kube-proxy just synced (healthy), its tables are the only proxy state
            // (no ipvs, no iptables KUBE-* chains: nftables mode cleans those on start), so nothing to act on.
            t.same(r.mixed, []);
            t.same(findingIds(r), [], `findings: ${JSON.stringify(r.findings.map((f) => [f.id, f.title]))}`);
            t.equal(r.verdict, "clean");
            // Read from kube-proxy itself, not defaulted: its own /configz, /metrics and /healthz answers.
            t.same(r.facts.proxyMode, { mode: "nftables" });
            t.match(r.facts.configz, {
              mode: "nftables",
              clusterCIDR: "10.244.0.0/16,fd00:244::/56",
              metricsBindAddress: METRICS,
              healthzBindAddress: HEALTH,
              nodePortAddresses: expect.nodePortAddresses,
            });
            const metrics = r.facts.kubeProxyMetrics;
            t.equal(metrics?.gitVersion, VERSION, "kubernetes_build_info of the real binary");
            t.equal(
              metrics?.metrics.kubeproxy_sync_proxy_rules_last_timestamp_seconds?.series,
              expect.syncSeries,
              "sync timestamps: one per IP family from v1.33",
            );
            t.match(r.facts.kubeProxyHealth, {
              status: 200,
              shape: expect.healthShape,
              healthy: true,
            });
            // The ETP Local LoadBalancer's health check, served by kube-proxy on its healthCheckNodePort.
            const hc = getIn(ns, `http://${NODE_IP4}:32000/`);
            t.equal(hc?.status, 200, "a local endpoint: the health check node port answers 200");
            t.match(JSON.parse(hc?.body ?? "{}"), {
              service: { namespace: "default", name: "lb" },
              localEndpoints: 1,
            });
          } catch (e) {
            t.comment(kp.log().slice(-4000));
            throw e;
          } finally {
            await kp.stop();
          }
        }),
    );
  }
}
