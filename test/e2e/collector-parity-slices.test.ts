// Parity, the collector's half: a switched node's parity (made by the agent's own comparison and report
// builder, served over HTTP as an agent would) held against the Services and EndpointSlices the API
// server STAND-IN serves in their real shapes. The official client reads them; the report classifies
// each flagged Service: confirmed loss, deleted since the snapshot, churn, a real loss of endpoints —
// and, when the read is forbidden, "not confirmed" with the missing permission, never "fine".
import t from "tap";
import { FleetReport } from "../../collector/report/schema.js";
import { SNAPSHOT_FORMAT, type IpvsSnapshot } from "../../agent/facts/parity.js";
import { emptyServed } from "../../agent/parse/nft-services.js";
import { compareParity } from "../../agent/parse/parity.js";
import { emptyFacts, metrics, noKernelState } from "../helpers/facts.js";
import { reportOf } from "../helpers/reports.js";
import { freePort } from "../helpers/prometheus.js";
import {
  agentPod,
  collector,
  fixture,
  fleetFlags,
  node,
  startAgent,
  startApiServer,
} from "./collector-fleet.js";

const now = new Date();
const nowS = Math.floor(now.getTime() / 1000);

// IPVS before the switch (what the snapshot kept) and kube-proxy's nftables maps and endpoint chains after.
const vs = (address: string, port: number, reals: string[]) => ({
  kind: "service-ip" as const,
  protocol: "TCP" as const,
  address,
  port,
  reals,
});
const snapshot: IpvsSnapshot = {
  format: SNAPSHOT_FORMAT,
  node: "canary",
  takenAt: nowS - 3600,
  virtualServers: [
    vs("10.96.0.10", 53, ["10.244.0.2:53"]), // kube-dns: same
    vs("10.96.0.20", 80, ["10.244.1.5:8080"]), // shop/cart: not served after, still exists
    vs("10.96.0.21", 80, ["10.244.1.9:8080"]), // shop/old-cart: not served after, deleted since
    vs("10.96.0.30", 443, ["10.244.2.7:8443"]), // web/api: rolled out since (churn)
    vs("10.96.0.40", 80, ["10.244.3.1:9200", "10.244.3.5:9200"]), // web/search: 10.244.3.2 never programmed
  ],
};
const served = emptyServed();
served.ips.set("TCP 10.96.0.10:53", "kube-system/kube-dns:dns-tcp");
served.ips.set("TCP 10.96.0.30:443", "web/api:https");
served.ips.set("TCP 10.96.0.40:80", "web/search:http");
served.endpoints.set("kube-system/kube-dns:dns-tcp TCP", new Set(["10.244.0.2:53"]));
served.endpoints.set("web/api:https TCP", new Set(["10.244.2.9:8443"]));
served.endpoints.set("web/search:http TCP", new Set(["10.244.3.1:9200"]));
const result = compareParity(snapshot, served);

const report = JSON.stringify({
  ...reportOf(
    emptyFacts({
      ...noKernelState,
      proxyMode: { mode: "nftables" },
      kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: nowS - 5 }),
      parity: {
        state: "compared",
        path: "/var/lib/proxyscope/ipvs-snapshot.json",
        takenAt: snapshot.takenAt,
        ageSeconds: 3600,
        maxAgeSeconds: 86_400,
        counts: result.counts,
        services: result.services,
        truncated: false,
      },
    }),
    {},
    now,
  ),
  node: "canary",
});

const port = await freePort();
const stop = await startAgent("127.0.0.31", port, { report });
t.teardown(stop);

const cluster = {
  nodes: [
    node({
      name: "canary",
      kernel: "6.8.0-1015-aws",
      osImage: "Ubuntu 24.04.1 LTS",
      labels: { "topology.kubernetes.io/zone": "zone-a" },
    }),
  ],
  pods: [agentPod("canary", "127.0.0.31", 0)],
  services: fixture<object[]>("parity-services.json"),
  endpointSlices: fixture<object[]>("parity-endpointslices.json"),
};

async function fleet(spec: typeof cluster & { forbidden?: string[] }, output = "json") {
  const api = await startApiServer(spec);
  try {
    return await collector(["report", ...fleetFlags(api.kubeconfig, port), "--output", output]);
  } finally {
    await api.stop();
  }
}

const checksOf = (stdout: string) => {
  const r = FleetReport.parse(JSON.parse(stdout));
  return { r, checks: r.nodes.find((n) => n.node === "canary")?.parity?.checks ?? [] };
};

t.test("the agent's comparison flags what the scenario broke", async (t) => {
  t.same(result.counts, { same: 1, missingAfter: 2, endpointsDiffer: 2, newAfter: 0, arpOnly: 0 });
});

t.test("each flagged Service classified against its current EndpointSlices", async (t) => {
  const out = await fleet(cluster);
  t.ok(out.code === 0 || out.code === 1, out.stderr);
  const { r, checks } = checksOf(out.stdout);
  t.same(
    checks.map((c) => [c.entry, c.agent, c.verdict, c.severity]),
    [
      ["shop/cart (10.96.0.20:80/TCP)", "missing-after", "confirmed-loss", "error"],
      ["10.96.0.21:80/TCP", "missing-after", "explained", "info"],
      ["web/api:https/TCP", "endpoints-differ", "churn", "info"],
      ["web/search:http/TCP", "endpoints-differ", "real-loss", "warning"],
    ],
  );
  t.match(checks[0]!.reason, /2 ready endpoint\(s\) \(10\.244\.1\.5:8080 10\.244\.2\.6:8080\)/);
  t.match(checks[1]!.reason, /no Service holds 10\.96\.0\.21:80\/TCP now: deleted/);
  t.match(checks[3]!.reason, /ready in the EndpointSlices but not in nftables: 10\.244\.3\.2:9200/);
  t.same(r.summary.parity?.byVerdict, { "confirmed-loss": 1, explained: 1, churn: 1, "real-loss": 1 });
  t.same(r.summary.parity?.nodesWithConfirmedLoss, ["canary"]);
  t.equal(r.plan.find((p) => p.id === "canary-then-pools")?.status, "blocked");
});

t.test("the text renderers show it per node and fleet-wide", async (t) => {
  const md = await fleet(cluster, "markdown");
  t.match(md.stdout, /### Against the API's current EndpointSlices/);
  t.match(
    md.stdout,
    /Fleet: \*\*1 confirmed lost\*\*, \*\*1 with endpoints lost\*\*, 1 churn, 1 explained, 0 not confirmed; confirmed on canary/,
  );
  t.match(md.stdout, /\| canary \| endpoints-differ \| churn \| info \| web\/api:https\/TCP \|/);
  const table = await fleet(cluster, "table");
  t.match(
    table.stdout,
    /vs API: 1 confirmed lost {2}1 endpoints lost {2}1 churn {2}1 explained {2}0 not confirmed {2}\(on canary\)/,
  );
  t.match(table.stdout, /canary {2}confirmed-loss +shop\/cart \(10\.96\.0\.20:80\/TCP\)/);
});

t.test(
  "EndpointSlices forbidden: not confirmed, with the missing permission; a deletion still shows",
  async (t) => {
    const out = await fleet({ ...cluster, forbidden: ["endpointslices"] });
    const { r, checks } = checksOf(out.stdout);
    t.same(
      checks.map((c) => [c.entry, c.verdict]),
      [
        ["shop/cart (10.96.0.20:80/TCP)", "not-confirmed"],
        ["10.96.0.21:80/TCP", "explained"],
        ["web/api:https/TCP", "not-confirmed"],
        ["web/search:http/TCP", "not-confirmed"],
      ],
    );
    for (const c of checks.filter((c) => c.verdict === "not-confirmed")) {
      t.match(
        c.reason,
        /HTTP 403: endpointslices\.discovery\.k8s\.io is forbidden: User "system:serviceaccount:proxyscope:proxyscope-collector" cannot list resource "endpointslices" in API group "discovery\.k8s\.io" at the cluster scope/,
      );
      t.match(c.reason, /needs RBAC: list on endpointslices in API group discovery\.k8s\.io/);
    }
    t.same(r.summary.parity?.nodesWithConfirmedLoss, [], "unread is never a loss, nor fine");
    t.equal(
      r.plan.find((p) => p.id === "canary-then-pools")?.status,
      "blocked",
      "a lost Service unconfirmed still holds the pool",
    );
  },
);
