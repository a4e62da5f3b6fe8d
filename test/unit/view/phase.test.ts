import t from "tap";
import { decidePhase } from "../../../agent/view/phase.js";
import { emptyFacts, noKernelState, refused, vs } from "../../helpers/facts.js";

t.test("kube-proxy's /proxyMode decides, whatever the kernel holds", async (t) => {
  const f = emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    kubeIpvs0: {
      present: true,
      kind: "dummy",
      operState: "DOWN",
      flags: [],
      addresses: [{ family: "inet", address: "10.96.0.1", prefixLen: 32 }],
    },
  });
  const d = decidePhase(f, new Map());
  t.equal(d.phase, "nftables");
  t.equal(d.source, "proxyMode");
  t.same(d.mixed, [{ mode: "ipvs", evidence: "kube-ipvs0 present with 1 addresses" }]);
});

t.test("an unknown mode string is unknown, not guessed", async (t) => {
  t.equal(
    decidePhase(emptyFacts({ ...noKernelState, proxyMode: { mode: "kernelspace" } }), new Map()).phase,
    "unknown",
  );
});

t.test("no kube-proxy and no state: none", async (t) => {
  const d = decidePhase(emptyFacts(noKernelState), new Map([["kube-proxy-mode", refused]]));
  t.equal(d.phase, "none");
});

t.test("something answering garbage on kube-proxy's port is not 'no kube-proxy'", async (t) => {
  const d = decidePhase(
    emptyFacts(noKernelState),
    new Map([["kube-proxy-mode", { kind: "garbage" as const, message: "x" }]]),
  );
  t.equal(d.phase, "unknown");
});

t.test("a failed kernel probe makes 'none' unknowable", async (t) => {
  const d = decidePhase(
    emptyFacts({ ...noKernelState, ipvs: null }),
    new Map([
      ["kube-proxy-mode", refused],
      ["ipvs", { kind: "not-permitted" as const, message: "EPERM" }],
    ]),
  );
  t.equal(d.phase, "unknown");
});

const liveIpvs = {
  ipvs: {
    available: true,
    virtualServerCount: 2,
    realServerCount: 2,
    schedulers: { rr: 2 },
    virtualServers: [vs("10.96.0.1", 443), vs("10.96.0.10", 53)],
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
};

// Stricter now: the Service IPs sit on kube-ipvs0 (ipvs mode always binds them there); virtual
// servers with no kube-ipvs0 are someone else's and no longer make the phase ipvs (next test).
t.test("kube-proxy silent: inferred from kernel state", async (t) => {
  const d = decidePhase(
    emptyFacts({ ...noKernelState, ...liveIpvs }),
    new Map([["kube-proxy-mode", refused]]),
  );
  t.equal(d.phase, "ipvs");
  t.equal(d.source, "kernel-state");
  t.ok(d.inferred);
  t.same(d.carrying, [
    { mode: "ipvs", evidence: "2 IPVS virtual servers for Service IPs on kube-ipvs0 with real servers" },
  ]);
});

t.test("kube-proxy silent: live IPVS outweighs an nftables table left by a canary", async (t) => {
  const f = emptyFacts({
    ...noKernelState,
    ...liveIpvs,
    nftables: {
      tables: [{ family: "ip", name: "kube-proxy", owner: "kube-proxy" }],
      kubeProxyTableName: "kube-proxy",
      kubeProxy: [
        {
          family: "ip",
          name: "kube-proxy",
          sets: [{ name: "service-ips", kind: "map", type: "x", elements: 4 }],
          chains: { total: 30, service: 4, endpoint: 6, external: 0, base: [] },
        },
      ],
      firewalls: [],
    },
  });
  const d = decidePhase(f, new Map([["kube-proxy-mode", refused]]));
  t.equal(d.phase, "ipvs", "nftables mode flushes IPVS on start: live virtual servers were synced since");
  t.same(d.mixed, [{ mode: "nftables", evidence: "table ip kube-proxy (30 chains)" }]);
});

t.test("kube-proxy silent: state that carries no traffic is left behind, phase none", async (t) => {
  const f = emptyFacts({
    ...noKernelState,
    ...liveIpvs,
    kubeIpvs0: { ...liveIpvs.kubeIpvs0, present: false, addresses: [] },
  });
  const d = decidePhase(f, new Map([["kube-proxy-mode", refused]]));
  t.equal(
    d.phase,
    "none",
    "virtual servers with no kube-ipvs0 are not kube-proxy's (keepalived, kube-router)",
  );
  t.ok(d.inferred);
});

t.test("kube-proxy silent, IPVS unread while ipvs state is seen: unknown, not nftables", async (t) => {
  const f = emptyFacts({
    ...noKernelState,
    ipvs: null,
    kubeIpvs0: liveIpvs.kubeIpvs0,
    nftables: {
      tables: [{ family: "ip", name: "kube-proxy", owner: "kube-proxy" }],
      kubeProxyTableName: "kube-proxy",
      kubeProxy: [
        {
          family: "ip",
          name: "kube-proxy",
          sets: [{ name: "service-ips", kind: "map", type: "x", elements: 4 }],
          chains: { total: 30, service: 4, endpoint: 6, external: 0, base: [] },
        },
      ],
      firewalls: [],
    },
  });
  const d = decidePhase(
    f,
    new Map([
      ["kube-proxy-mode", refused],
      ["ipvs", { kind: "missing-tool" as const, message: "no ip_vs" }],
    ]),
  );
  t.equal(d.phase, "unknown");
});
