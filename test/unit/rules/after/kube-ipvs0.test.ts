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

// kube-ipvs0 holding addresses with no IPVS virtual server behind them is a black hole
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

// A kube-ipvs0 that something other than kube-proxy brought up (systemd-networkd's catch-all .network on
// Flatcar before flatcar/init#89, a hand-run `ip link set kube-ipvs0 up`, k/k#107662) gets an IPv6
// link-local address from the kernel. kube-proxy never binds it and leaves it out of its own set
// (pkg/proxy/ipvs/netlink_linux.go GetLocalAddresses: "IPv6 link-local and loopback addresses are
// excluded"): it is no Service IP, so it is never a black hole, and it is not counted as one held.
const noVirtualServers = { ...noKernelState.ipvs!, available: true };
const linkLocal = { family: "inet6" as const, address: "fe80::18ab:99ff:fec0:a20d", prefixLen: 64 };
const upWith = (addresses: { family: "inet" | "inet6"; address: string; prefixLen: number }[]) => ({
  present: true,
  kind: "dummy",
  operState: "UNKNOWN",
  flags: ["BROADCAST", "NOARP", "UP", "LOWER_UP"],
  addresses,
});

t.test(
  "kube-ipvs0 up, kube-proxy silent, every Service IP backed: the fe80:: address is no black hole",
  async (t) => {
    const all = partial().ipvs!;
    const f = partial({
      ipvs: { ...all, virtualServerCount: 2, virtualServers: [...all.virtualServers, vs("10.96.0.10", 53)] },
      kubeIpvs0: upWith([
        { family: "inet", address: "10.96.0.1", prefixLen: 32 },
        { family: "inet", address: "10.96.0.10", prefixLen: 32 },
        linkLocal,
      ]),
    });
    const j = judge(f, new Map([["kube-proxy-mode", refused]]), NOW);
    t.equal(j.phase, "ipvs");
    t.notOk(ids(j).includes("kube-ipvs0-black-hole"), "no black hole for the link's own link-local address");
    t.same(j.view.blackHoled, []);
  },
);

t.test("kube-ipvs0 up after kube-proxy left: only the Service IPs are black holes, counted so", async (t) => {
  const f = partial({
    ipvs: noVirtualServers,
    kubeIpvs0: upWith([{ family: "inet", address: "10.96.0.1", prefixLen: 32 }, linkLocal]),
  });
  const j = judge(f, new Map([["kube-proxy-mode", refused]]), NOW);
  const hole = j.findings.find((x) => x.id === "kube-ipvs0-black-hole");
  t.same(hole?.evidence.blackHoled, ["10.96.0.1"]);
  t.equal(hole?.evidence.blackHoledCount, 1);
  t.equal(hole?.evidence.addressesOnKubeIpvs0, 1, "the Service IPs it holds, not the kernel's link-local");
});

t.test(
  "kube-ipvs0 up holding only its link-local address, kube-proxy in nftables: left, not a black hole",
  async (t) => {
    const f = partial({
      proxyMode: { mode: "nftables" },
      ipvs: noVirtualServers,
      kubeIpvs0: upWith([linkLocal]),
    });
    const j = judge(f, new Map(), NOW);
    t.notOk(ids(j).includes("kube-ipvs0-black-hole"));
    t.ok(ids(j).includes("kube-ipvs0-left"), "the link itself is still a leftover");
  },
);
