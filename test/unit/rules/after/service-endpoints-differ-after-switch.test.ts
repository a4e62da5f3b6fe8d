import t from "tap";
import { judge, NOW } from "../../../helpers/rules.js";
import { emptyFacts, metrics, noKernelState } from "../../../helpers/facts.js";
import type { NodeFacts } from "../../../../agent/report/schema.js";
import type { ServiceParity } from "../../../../agent/facts/parity.js";

// Parity: endpoints differ between the snapshot and now: churn (info) unless a Service lost them all or
// many differ (warning).
const differ = (before: number, after: number): ServiceParity => ({
  service: "web/api:https",
  protocol: "TCP",
  addresses: ["10.96.0.30:443"],
  status: "endpoints-differ",
  endpointsBefore: before,
  endpointsAfter: after,
  gone: ["10.244.2.7:8443"],
  added: after > 0 ? ["10.244.2.9:8443"] : [],
});
const node = (services: ServiceParity[], same: number): NodeFacts =>
  emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5 }),
    parity: {
      state: "compared",
      path: "/var/lib/proxyscope/ipvs-snapshot.json",
      takenAt: NOW - 1200,
      ageSeconds: 1200,
      maxAgeSeconds: 86_400,
      counts: { same, missingAfter: 0, endpointsDiffer: services.length, newAfter: 0 },
      services,
      truncated: false,
    },
  });
const find = (f: NodeFacts) =>
  judge(f, new Map(), NOW).findings.find((x) => x.id === "service-endpoints-differ-after-switch");

t.test("one of many replaced an endpoint: info, named, with the snapshot's age", async (t) => {
  const f = find(node([differ(1, 1)], 50));
  t.equal(f?.severity, "info");
  t.match(f?.title, /1 of 51 Service ports .* 20 min ago/);
  t.match(
    String((f?.evidence.services as string[])[0]),
    /web\/api:https\/TCP: 1 -> 1 gone 10\.244\.2\.7:8443 new 10\.244\.2\.9:8443/,
  );
});

t.test("a Service with endpoints before and none now: warning", async (t) => {
  const f = find(node([differ(2, 0)], 50));
  t.equal(f?.severity, "warning");
  t.equal(f?.evidence.nowWithoutEndpoints, 1);
});

t.test("more than a tenth differ: warning", async (t) => {
  t.equal(find(node([differ(1, 1), differ(1, 1)], 5))?.severity, "warning");
});

t.test("none differ: no finding", async (t) => {
  t.equal(find(node([], 5)), undefined);
});
