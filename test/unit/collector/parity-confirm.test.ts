import t from "tap";
import { confirmNodeParity } from "../../../collector/parity/confirm.js";
import { usableEndpoints } from "../../../collector/parity/endpoints.js";
import { canaryParityNote } from "../../../collector/parity/fleet.js";
import type {
  ApiEndpointSlice,
  ApiService,
  ClusterFacts,
  SliceEndpoint,
} from "../../../collector/report/cluster-facts.js";
import type { NodeParity } from "../../../collector/parity/schema.js";
import type { FleetNode } from "../../../collector/report/schema.js";

// Parity, the pure half of the collector's confirmation: which endpoints kube-proxy would program from the
// current EndpointSlices (pkg/proxy/topology.go CategorizeEndpoints), and what each flagged entry is.

const svc = (over: Partial<ApiService> = {}): ApiService => ({
  namespace: "web",
  name: "api",
  type: "ClusterIP",
  clusterIPs: ["10.96.0.30"],
  ports: [{ name: "https", protocol: "TCP", port: 443, nodePort: null }],
  sessionAffinity: null,
  internalTrafficPolicy: "Cluster",
  externalTrafficPolicy: null,
  ...over,
});
const ep = (address: string, over: Partial<SliceEndpoint> = {}): SliceEndpoint => ({
  address,
  ready: true,
  serving: true,
  terminating: false,
  nodeName: "node-b",
  forZones: null,
  forNodes: null,
  ...over,
});
const slice = (endpoints: SliceEndpoint[], name = "api", port = 8443): ApiEndpointSlice => ({
  namespace: "web",
  service: name,
  addressType: "IPv4",
  endpoints,
  ports: [{ name: "https", protocol: "TCP", port }],
});
const held = (s: ApiService) => ({ svc: s, port: s.ports[0]! });
const sorted = (x: Set<string>) => [...x].sort();

t.test("ready endpoints; serving-terminating only when none is ready", async (t) => {
  const s = svc();
  const u = usableEndpoints(
    [slice([ep("10.244.2.9"), ep("10.244.2.7", { ready: false, serving: true, terminating: true })])],
    held(s),
    "node-a",
    null,
  );
  t.same(sorted(u.all), ["10.244.2.9:8443"]);
  const fallback = usableEndpoints(
    [
      slice([
        ep("10.244.2.7", { ready: false, serving: true, terminating: true }),
        ep("10.244.2.8", { ready: false, serving: false }),
      ]),
    ],
    held(s),
    "node-a",
    null,
  );
  t.same(sorted(fallback.all), ["10.244.2.7:8443"], "kube-proxy falls back to serving terminating endpoints");
  t.same(fallback.readyAnywhere, []);
});

t.test("internalTrafficPolicy Local: only the node's own endpoints", async (t) => {
  const s = svc({ internalTrafficPolicy: "Local" });
  const u = usableEndpoints(
    [slice([ep("10.244.1.1", { nodeName: "node-a" }), ep("10.244.2.1", { nodeName: "node-b" })])],
    held(s),
    "node-a",
    null,
  );
  t.same(sorted(u.all), ["10.244.1.1:8443"]);
  t.equal(u.readyAnywhere.length, 2);
});

t.test("zone hints: the hinted subset for the node's zone is an accepted answer too", async (t) => {
  const u = usableEndpoints(
    [slice([ep("10.244.1.1", { forZones: ["zone-a"] }), ep("10.244.2.1", { forZones: ["zone-b"] })])],
    held(svc()),
    "node-a",
    "zone-a",
  );
  t.same(sorted(u.all), ["10.244.1.1:8443", "10.244.2.1:8443"]);
  t.same(sorted(u.topology!), ["10.244.1.1:8443"]);
});

t.test("a slice of another port, protocol or an FQDN slice is not read", async (t) => {
  const other: ApiEndpointSlice = {
    ...slice([ep("10.244.9.9")]),
    ports: [{ name: "metrics", protocol: "TCP", port: 9090 }],
  };
  const fqdn: ApiEndpointSlice = { ...slice([ep("example.com")]), addressType: "FQDN" };
  t.same(sorted(usableEndpoints([other, fqdn], held(svc()), "n", null).all), []);
});

const facts = (services: ApiService[], gaps: ClusterFacts["gaps"] = []): ClusterFacts => ({
  version: null,
  nodes: [],
  kubeProxyConfigMap: null,
  kubeProxyDaemonSet: null,
  staticKubeProxy: null,
  kubeadm: false,
  services,
  daemonSets: null,
  gaps,
});
const parity = (over: Partial<NodeParity>): NodeParity => ({
  state: "compared",
  snapshotAgeSeconds: 60,
  counts: {
    same: 0,
    missingAfter: over.lost?.length ?? 0,
    endpointsDiffer: over.differ?.length ?? 0,
    newAfter: 0,
  },
  lost: [],
  differ: [],
  ...over,
});
const differ = (
  after: string[] | null,
  endpointsAfter: number,
  gone: string[] = [],
  added: string[] = [],
) => ({
  service: "web/api:https",
  protocol: "TCP",
  endpointsAfter,
  after,
  gone,
  added,
});
const ok = (slices: ApiEndpointSlice[]) => new Map([["web/api", { ok: true as const, slices }]]);

t.test("never 'fine' without the API", async (t) => {
  const p = parity({ lost: ["10.96.0.30:443/TCP"], differ: [differ(["10.244.2.9:8443"], 1)] });
  const none = confirmNodeParity(p, { cluster: null, slices: undefined, node: "n", zone: null });
  t.same(
    none.map((c) => c.verdict),
    ["not-confirmed", "not-confirmed"],
  );
  t.match(none[0]!.reason, /no API server was asked/);
  const gap = confirmNodeParity(p, {
    cluster: facts([], [{ what: "services (all namespaces)", reason: "HTTP 403: forbidden" }]),
    slices: new Map(),
    node: "n",
    zone: null,
  });
  t.same(
    gap.map((c) => c.verdict),
    ["not-confirmed", "not-confirmed"],
    "an unread Service list is no deletion",
  );
  t.match(gap[0]!.reason, /Services not read: HTTP 403/);
  const timeout = confirmNodeParity(p, {
    cluster: facts([svc()]),
    slices: new Map([["web/api", { ok: false as const, reason: "timed out" }]]),
    node: "n",
    zone: null,
  });
  t.same(
    timeout.map((c) => [c.verdict, c.reason]),
    [
      ["not-confirmed", "EndpointSlices not read: timed out"],
      ["not-confirmed", "EndpointSlices not read: timed out"],
    ],
  );
});

t.test(
  "missing after: an externalIP or LoadBalancer IP names its Service too; no ready endpoint explains it",
  async (t) => {
    const s = svc({ externalIPs: ["192.0.2.7"], loadBalancerIPs: ["198.51.100.9"] });
    const ctx = (slices: ApiEndpointSlice[]) => ({
      cluster: facts([s]),
      slices: ok(slices),
      node: "n",
      zone: null,
    });
    const lost = parity({ lost: ["192.0.2.7:443/TCP", "198.51.100.9:443/TCP"] });
    t.same(
      confirmNodeParity(lost, ctx([slice([ep("10.244.2.9")])])).map((c) => [c.entry, c.verdict]),
      [
        ["web/api (192.0.2.7:443/TCP)", "confirmed-loss"],
        ["web/api (198.51.100.9:443/TCP)", "confirmed-loss"],
      ],
    );
    const idle = confirmNodeParity(lost, ctx([slice([ep("10.244.2.9", { ready: false, serving: false })])]));
    t.same(
      idle.map((c) => c.verdict),
      ["explained", "explained"],
    );
    t.match(idle[0]!.reason, /no ready endpoint now/);
  },
);

t.test("endpoints differ: a cut list is judged only where it contradicts", async (t) => {
  const ctx = (slices: ApiEndpointSlice[]) => ({
    cluster: facts([svc()]),
    slices: ok(slices),
    node: "n",
    zone: null,
  });
  const three = [slice([ep("10.244.2.1"), ep("10.244.2.2"), ep("10.244.2.3")])];
  // The agent listed 2 of 3, all ready: agreeing, unproven.
  const cut = confirmNodeParity(
    parity({ differ: [differ(["10.244.2.1:8443", "10.244.2.2:8443"], 3)] }),
    ctx(three),
  );
  t.same(
    cut.map((c) => c.verdict),
    ["not-confirmed"],
  );
  t.match(cut[0]!.reason, /listed 2 of 3/);
  // An older agent (no list), but one it says is gone is ready now: a real loss.
  const old = confirmNodeParity(parity({ differ: [differ(null, 3, ["10.244.2.3:8443"])] }), ctx(three));
  t.same(
    old.map((c) => c.verdict),
    ["real-loss"],
  );
  t.match(old[0]!.reason, /ready but no longer in nftables: 10\.244\.2\.3:8443/);
  // Nothing the slices make ready is served: an error, not a warning.
  const none = confirmNodeParity(parity({ differ: [differ(["10.244.9.9:8443"], 1)] }), ctx(three));
  t.same(
    none.map((c) => [c.verdict, c.severity]),
    [["real-loss", "error"]],
  );
  // Deleted, or its port removed, since the snapshot.
  t.same(
    confirmNodeParity(parity({ differ: [differ(["10.244.2.1:8443"], 1)] }), {
      ...ctx(three),
      cluster: facts([]),
    }).map((c) => c.verdict),
    ["explained"],
  );
});

t.test("the canary step: explained losses do not hold the next pool; unconfirmed ones do", async (t) => {
  const n = (checks: NodeParity["checks"]): FleetNode =>
    ({
      node: "c",
      outcome: "ok",
      phase: "nftables",
      parity: parity({ lost: ["x"], checks }),
    }) as unknown as FleetNode;
  const base = { entry: "x", agent: "missing-after" as const, reason: "r" };
  t.same(canaryParityNote([n([{ ...base, verdict: "explained", severity: "info" }])]).blocked, []);
  t.same(canaryParityNote([n([{ ...base, verdict: "not-confirmed", severity: "warning" }])]).blocked, ["c"]);
  t.same(
    canaryParityNote([n(undefined)]).blocked,
    ["c"],
    "no confirmation at all: the agent's count decides",
  );
  // The agent cut its list (or Prometheus carried the count only): what the API never judged is unproven.
  const cut = {
    node: "c",
    outcome: "ok",
    phase: "nftables",
    parity: {
      ...parity({ lost: ["x"], checks: [{ ...base, verdict: "explained", severity: "info" }] }),
      counts: { same: 0, missingAfter: 40, endpointsDiffer: 0, newAfter: 0 },
    },
  } as unknown as FleetNode;
  t.same(canaryParityNote([cut]).blocked, ["c"], "39 lost Services no check covered hold the pool");
  const countsOnly = {
    node: "p",
    outcome: "ok",
    phase: "nftables",
    parity: {
      ...parity({ lost: [], checks: [] }),
      counts: { same: 5, missingAfter: 1, endpointsDiffer: 0, newAfter: 0 },
    },
  } as unknown as FleetNode;
  t.same(canaryParityNote([countsOnly]).blocked, ["p"], "a count with no list (Prometheus) holds the pool");
});
