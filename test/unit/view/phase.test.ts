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

t.test("kube-proxy silent: inferred from kernel state", async (t) => {
  const f = emptyFacts({
    ...noKernelState,
    ipvs: {
      available: true,
      virtualServerCount: 2,
      realServerCount: 2,
      schedulers: { rr: 2 },
      virtualServers: [vs("10.96.0.1", 443), vs("10.96.0.10", 53)],
      timeouts: null,
    },
  });
  const d = decidePhase(f, new Map([["kube-proxy-mode", refused]]));
  t.equal(d.phase, "ipvs");
  t.equal(d.source, "kernel-state");
});
