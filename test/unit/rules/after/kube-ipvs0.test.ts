import t from "tap";
import { ids, judge, NOW } from "../../../helpers/rules.js";
import type { NodeFacts } from "../../../../agent/report/schema.js";
import { configz, emptyFacts, metrics, noKernelState, refused, vs } from "../../../helpers/facts.js";

t.test("nftables node: black hole lists every address and makes the node unhealthy", async (t) => {
  const f = emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    configz: configz({ mode: "nftables" }),
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5 }),
    kubeIpvs0: {
      present: true,
      kind: "dummy",
      operState: "DOWN",
      flags: [],
      addresses: ["10.96.0.1", "10.96.0.10", "fd00::a"].map((address) => ({
        family: address.includes(":") ? ("inet6" as const) : ("inet" as const),
        address,
        prefixLen: 32,
      })),
    },
    nftables: {
      tables: [{ family: "ip", name: "kube-proxy", owner: "kube-proxy" }],
      kubeProxyTableName: "kube-proxy",
      kubeProxy: [
        {
          family: "ip",
          name: "kube-proxy",
          sets: [],
          chains: { total: 10, service: 2, endpoint: 2, external: 0, base: [] },
        },
      ],
      firewalls: [],
    },
  });
  const j = judge(f, new Map(), NOW);
  const hole = j.findings.find((x) => x.id === "kube-ipvs0-black-hole");
  t.same(hole?.evidence.blackHoled, ["10.96.0.1", "10.96.0.10", "fd00::a"]);
  t.equal(hole?.severity, "critical");
  t.equal(j.verdict, "unhealthy");
});

t.test("kube-ipvs0 with addresses but no IPVS reading: left, not called a black hole", async (t) => {
  const f = emptyFacts({
    ...noKernelState,
    ipvs: null,
    proxyMode: { mode: "nftables" },
    kubeIpvs0: {
      present: true,
      kind: "dummy",
      operState: "DOWN",
      flags: [],
      addresses: [{ family: "inet", address: "10.96.0.1", prefixLen: 32 }],
    },
  });
  const j = judge(f, new Map([["ipvs", { kind: "not-permitted" as const, message: "EACCES" }]]), NOW);
  t.ok(ids(j).includes("kube-ipvs0-left"));
  t.notOk(ids(j).includes("kube-ipvs0-black-hole"));
});

// Issue #12 point 2: kube-ipvs0 holding addresses with no IPVS virtual server behind them is a black hole
// whatever the phase — kube-proxy crashed or gone (a guessed ipvs phase), or a mode it does not name.
const partial = (over: Partial<NodeFacts> = {}) =>
  emptyFacts({
    ...noKernelState,
    ipvs: {
      available: true,
      virtualServerCount: 1,
      realServerCount: 2,
      schedulers: { rr: 1 },
      virtualServers: [vs("10.96.0.1", 443, { realServers: 2 })],
      timeouts: null,
    },
    kubeIpvs0: {
      present: true,
      kind: "dummy",
      operState: "DOWN",
      flags: [],
      addresses: ["10.96.0.1", "10.96.0.10"].map((address) => ({
        family: "inet" as const,
        address,
        prefixLen: 32,
      })),
    },
    ...over,
  });

t.test("kube-proxy silent, IPVS still serving some Service IPs: the rest are black holes", async (t) => {
  const j = judge(partial(), new Map([["kube-proxy-mode", refused]]), NOW);
  t.equal(j.phase, "ipvs");
  t.ok(j.view.inferred);
  const hole = j.findings.find((x) => x.id === "kube-ipvs0-black-hole");
  t.same(hole?.evidence.blackHoled, ["10.96.0.10"]);
  t.match(hole?.remedy, /^Confirm first what runs on this node/, "deletion only once confirmed");
  t.equal(j.verdict, "unhealthy");
});

t.test("kube-proxy answering a mode nobody knows: the black hole is still named", async (t) => {
  const j = judge(partial({ proxyMode: { mode: "kernelspace" } }), new Map(), NOW);
  t.equal(j.phase, "unknown");
  t.same(j.findings.find((x) => x.id === "kube-ipvs0-black-hole")?.evidence.blackHoled, ["10.96.0.10"]);
  t.equal(j.verdict, "unhealthy");
});

t.test("kube-proxy answering ipvs: a sync in flight, not a black hole", async (t) => {
  const j = judge(partial({ proxyMode: { mode: "ipvs" } }), new Map(), NOW);
  t.notOk(ids(j).includes("kube-ipvs0-black-hole"));
});
