import t from "tap";
import { ids, judge, NOW } from "../../../helpers/rules.js";
import { emptyFacts, metrics, noKernelState } from "../../../helpers/facts.js";
import type { NodeFacts } from "../../../../agent/report/schema.js";
import type { ServiceParity } from "../../../../agent/facts/parity.js";

// Parity: a Service address IPVS served before the switch that no kube-proxy nftables map serves now.
const lost: ServiceParity = {
  service: null,
  protocol: "TCP",
  addresses: ["10.96.0.20:80"],
  status: "missing-after",
  endpointsBefore: 2,
  endpointsAfter: 0,
  gone: ["10.244.1.5:8080", "10.244.1.6:8080"],
  added: [],
};
const node = (parity: NodeFacts["parity"]): NodeFacts =>
  emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5 }),
    parity,
  });
const compared = (services: ServiceParity[], missingAfter: number): NodeFacts["parity"] => ({
  state: "compared",
  path: "/var/lib/proxyscope/ipvs-snapshot.json",
  takenAt: NOW - 600,
  ageSeconds: 600,
  maxAgeSeconds: 86_400,
  counts: { same: 10, missingAfter, endpointsDiffer: 0, newAfter: 0 },
  services,
  truncated: false,
});

t.test("a lost Service is an error naming its address", async (t) => {
  const f = judge(node(compared([lost], 1)), new Map(), NOW).findings.find(
    (x) => x.id === "services-lost-in-switch",
  );
  t.equal(f?.severity, "error");
  t.same(f?.evidence.lost, ["10.96.0.20:80/TCP (2 endpoints before)"]);
  t.equal(f?.evidence.snapshotAgeSeconds, 600);
});

t.test("nothing lost, or nothing compared: no finding", async (t) => {
  for (const p of [
    compared([], 0),
    { state: "stale", path: "/x", takenAt: 0, ageSeconds: 9e5, maxAgeSeconds: 86_400 },
    { state: "no-snapshot", path: "/x" },
    { state: "corrupt", path: "/x", why: "not JSON" },
    null,
  ] as NodeFacts["parity"][]) {
    t.notOk(ids(judge(node(p), new Map(), NOW)).includes("services-lost-in-switch"), JSON.stringify(p));
  }
});
