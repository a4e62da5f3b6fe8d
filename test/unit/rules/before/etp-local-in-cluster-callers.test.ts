import t from "tap";
import { ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import type { NodeFacts } from "../../../../agent/report/schema.js";

// ipvs mode applies externalTrafficPolicy: Local to the LB-IP, externalIP and NodePort virtual servers
// whoever the client is (pkg/proxy/ipvs/proxier.go v1.34.4 syncEndpoint(…, ExternalPolicyLocal(), …)), so
// pods and the host on a node with a local endpoint always got that node's endpoint. nftables mode sends
// pod and host clients of those destinations to all endpoints (pkg/proxy/nftables/proxier.go v1.34.4:
// "short-circuit pod traffic", "short-circuit local traffic"). What an SRE expects: with in-cluster
// connections to such destinations seen in conntrack, a warning naming them (callers start crossing
// nodes and zones); none seen: silent; conntrack not read while ETP Local destinations exist: an info
// saying it was not measured (never "none").
const ID = "etp-local-in-cluster-callers";
const LOCAL_SETS = [
  {
    name: "KUBE-LOAD-BALANCER-LOCAL",
    type: "hash:ip,port",
    family: "inet" as const,
    entries: 1,
    references: 1,
    kubeProxy: true,
  },
];
const node = (serviceConntrack: NodeFacts["serviceConntrack"], sets = LOCAL_SETS) =>
  ipvsNode({
    ipsets: {
      available: true,
      sets,
      etpLocal: { addresses: ["TCP 203.0.113.10:443"], nodePorts: ["TCP:30443"] },
    },
    serviceConntrack,
  });
const finding = (f: NodeFacts) => judge(f, new Map(), NOW).findings.find((x) => x.id === ID);
const svcNone = { read: true as const, to: [], flows: 0 };

t.test("in-cluster connections to ETP Local destinations: a warning naming them", async (t) => {
  const j = judge(
    node({
      etpLocalFromInside: {
        read: true,
        inside: "node addresses, clusterCIDR 10.244.0.0/16",
        to: [
          { destination: "TCP 203.0.113.10:443", connections: 7 },
          { destination: "TCP 192.168.4.11:30443", connections: 2 },
        ],
        destinations: 2,
      },
      serviceIpsOther: svcNone,
    }),
    new Map(),
    NOW,
  );
  const f = j.findings.find((x) => x.id === ID);
  t.equal(f?.severity, "warning");
  t.equal(f?.stage, "before");
  t.equal(f?.blocksMigration, false);
  t.same(f?.evidence.connections, [
    "TCP 203.0.113.10:443 (7 connections)",
    "TCP 192.168.4.11:30443 (2 connections)",
  ]);
  t.equal(f?.evidence.inside, "node addresses, clusterCIDR 10.244.0.0/16");
  t.match(f?.title, /9 in-cluster connections to 2 externalTrafficPolicy: Local destinations/);
  t.equal(j.verdict, "attention");
});

t.test("none seen: silent, and the node stays ready", async (t) => {
  const j = judge(
    node({
      etpLocalFromInside: { read: true, inside: "node addresses only", to: [], destinations: 0 },
      serviceIpsOther: svcNone,
    }),
    new Map(),
    NOW,
  );
  t.notOk(j.findings.some((x) => x.id === ID));
  t.equal(j.verdict, "ready");
});

t.test("conntrack not read with ETP Local destinations here: an info, never taken for none", async (t) => {
  const f = finding(
    node({
      etpLocalFromInside: { read: false, why: "io: /proc/net/nf_conntrack: ENOENT" },
      serviceIpsOther: { read: false, why: "io: /proc/net/nf_conntrack: ENOENT" },
    }),
  );
  t.equal(f?.severity, "info");
  t.match(f?.evidence.connections, /^not read: io/);
});

t.test("not read and no ETP Local destination in kube-proxy's sets: nothing to measure", async (t) => {
  const f = finding(
    node(
      {
        etpLocalFromInside: { read: false, why: "io: /proc/net/nf_conntrack: ENOENT" },
        serviceIpsOther: svcNone,
      },
      [{ ...LOCAL_SETS[0]!, entries: 0 }],
    ),
  );
  t.notOk(f);
});

t.test("only while ipvs mode runs", async (t) => {
  const f = node({
    etpLocalFromInside: {
      read: true,
      inside: "node addresses",
      to: [{ destination: "TCP 203.0.113.10:443", connections: 7 }],
      destinations: 1,
    },
    serviceIpsOther: svcNone,
  });
  t.notOk(finding({ ...f, proxyMode: { mode: "nftables" } }));
});
