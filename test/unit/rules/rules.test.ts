import t from "tap";
import { judge } from "../../../agent/rules/index.js";
import { readCounter } from "../../../agent/view/counters.js";
import {
  configz,
  emptyFacts,
  metrics,
  noKernelState,
  refused,
  vs,
  iptablesBackend,
} from "../../helpers/facts.js";

const NOW = 1_800_000_000;
const ids = (j: ReturnType<typeof judge>) => j.findings.map((f) => f.id).sort();

const kernel = (release: string) => {
  const [maj, min] = release.split(".").map(Number);
  return { release, major: maj!, minor: min!, patch: 0 };
};

const addresses = (primary: string, secondary: string[] = []) => ({
  interfaces: [
    {
      name: "lo",
      kind: null,
      operState: "UNKNOWN",
      addresses: [{ family: "inet" as const, address: "127.0.0.1", prefixLen: 8, scope: "host" }],
    },
    {
      name: "eth0",
      kind: null,
      operState: "UP",
      addresses: [primary, ...secondary].map((a) => ({
        family: "inet" as const,
        address: a,
        prefixLen: 24,
        scope: "global",
      })),
    },
  ],
  primary: { ipv4: primary, ipv6: null, source: "config" as const },
});

const ipvsNode = (over = {}) =>
  emptyFacts({
    ...noKernelState,
    kernel: kernel("6.8.0-51-generic"),
    proxyMode: { mode: "ipvs" },
    configz: configz(),
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 10 }, "v1.33.1"),
    addresses: addresses("192.168.4.11"),
    ipvs: {
      available: true,
      virtualServerCount: 2,
      realServerCount: 3,
      schedulers: { rr: 2 },
      virtualServers: [vs("10.96.0.1", 443), vs("10.96.0.10", 53, { protocol: "UDP" })],
      timeouts: { tcp: 900, tcpFin: 120, udp: 300 },
    },
    kubeIpvs0: {
      present: true,
      kind: "dummy",
      operState: "DOWN",
      flags: ["BROADCAST", "NOARP"],
      addresses: ["10.96.0.1", "10.96.0.10"].map((address) => ({
        family: "inet" as const,
        address,
        prefixLen: 32,
      })),
    },
    ...over,
  });

t.test("a healthy ipvs node on a new kernel is ready, with the deprecation noted", async (t) => {
  const j = judge(ipvsNode(), new Map(), NOW);
  t.equal(j.phase, "ipvs");
  t.equal(j.verdict, "ready");
  t.same(ids(j), ["ipvs-mode-deprecated"]);
  t.equal(j.findings[0]!.severity, "info");
});

t.test("kernel older than 5.13 blocks, with distro-aware advice", async (t) => {
  const j = judge(
    ipvsNode({
      kernel: kernel("5.4.0-216-generic"),
      osRelease: {
        source: "/etc/os-release",
        id: "ubuntu",
        idLike: ["debian"],
        versionId: "20.04",
        versionCodename: "focal",
        prettyName: "Ubuntu 20.04.6 LTS",
      },
    }),
    new Map(),
    NOW,
  );
  t.equal(j.verdict, "blocked");
  const f = j.findings.find((x) => x.id === "kernel-too-old-for-nftables");
  t.ok(f?.blocksMigration);
  t.match(f?.remedy, /linux-generic-hwe-20\.04/);
  t.equal(f?.evidence.kernel, "5.4.0-216-generic");
});

t.test("nft older than 1.0.1 blocks; 1.0.1 does not", async (t) => {
  const old = judge(ipvsNode({ nftVersion: { version: "0.9.3", source: "dpkg" } }), new Map(), NOW);
  t.ok(ids(old).includes("nft-too-old"));
  const ok = judge(ipvsNode({ nftVersion: { version: "1.0.1", source: "dpkg" } }), new Map(), NOW);
  t.notOk(ids(ok).includes("nft-too-old"));
});

t.test("foreign IPVS virtual servers are named; kube-proxy's and NodePorts are not", async (t) => {
  const f = ipvsNode();
  f.ipvs!.virtualServers.push(vs("192.168.4.11", 30080), vs("192.168.4.200", 80), {
    ...vs("0.0.0.0", 0),
    protocol: "FWM",
    address: null,
    port: null,
    fwmark: 7,
  });
  f.ipvs!.virtualServerCount = 5;
  f.addresses = addresses("192.168.4.11", ["192.168.4.200"]);
  const j = judge(f, new Map(), NOW);
  const x = j.findings.find((y) => y.id === "foreign-ipvs-virtual-servers");
  t.same(x?.evidence.virtualServers, ["TCP 192.168.4.200:80", "FWM 7"]);
  t.equal(j.verdict, "blocked");
});

t.test("without kube-ipvs0 facts nothing is called foreign", async (t) => {
  const f = ipvsNode({ kubeIpvs0: null });
  const j = judge(
    f,
    new Map([["kube-ipvs0", { kind: "missing-tool" as const, message: "ip not found" }]]),
    NOW,
  );
  t.notOk(ids(j).includes("foreign-ipvs-virtual-servers"));
});

t.test("NodePorts with traffic on a secondary address are an error; without traffic a warning", async (t) => {
  const f = ipvsNode({ addresses: addresses("192.168.4.11", ["10.0.0.5"]) });
  f.ipvs!.virtualServers.push(
    vs("10.0.0.5", 30080, { activeConns: 3 }),
    vs("192.168.4.11", 30080, { activeConns: 9 }),
  );
  const j = judge(f, new Map(), NOW);
  const x = j.findings.find((y) => y.id === "nodeport-addresses-shrink");
  t.equal(x?.severity, "error");
  t.same(x?.evidence.withConnections, ["TCP 10.0.0.5:30080 (3 active, 0 inactive)"]);
  const quiet = ipvsNode({ addresses: addresses("192.168.4.11", ["10.0.0.5"]) });
  t.equal(
    judge(quiet, new Map(), NOW).findings.find((y) => y.id === "nodeport-addresses-shrink")?.severity,
    "warning",
  );
  const pinned = ipvsNode({
    addresses: addresses("192.168.4.11", ["10.0.0.5"]),
    configz: configz({ nodePortAddresses: ["192.168.4.0/24"] }),
  });
  t.notOk(ids(judge(pinned, new Map(), NOW)).includes("nodeport-addresses-shrink"));
});

t.test("counters: not applicable in the wrong mode, absent failure counter is zero", async (t) => {
  const f = ipvsNode();
  t.same(
    readCounter(f, "ipvs", "kubeproxy_iptables_localhost_nodeports_accepted_packets_total").state,
    "not-applicable",
  );
  t.same(readCounter(f, "nftables", "kubeproxy_sync_proxy_rules_nftables_sync_failures_total"), {
    state: "absent-means-zero",
  });
  t.same(
    readCounter(emptyFacts(), "nftables", "kubeproxy_sync_proxy_rules_nftables_sync_failures_total").state,
    "unknown",
  );
});

t.test("iptables mode: localhost NodePorts and conntrack counters", async (t) => {
  const f = emptyFacts({
    ...noKernelState,
    kernel: kernel("5.15.0-100-generic"),
    proxyMode: { mode: "iptables" },
    configz: configz({ mode: "iptables" }),
    kubeProxyMetrics: metrics({
      kubeproxy_iptables_localhost_nodeports_accepted_packets_total: 41822,
      kubeproxy_iptables_ct_state_invalid_dropped_packets_total: 12,
      kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5,
    }),
  });
  const j = judge(f, new Map(), NOW);
  t.same(ids(j), ["conntrack-workaround-relied-on", "localhost-nodeports-in-use"]);
  t.equal(j.verdict, "attention");
});

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

t.test("nftables node: leftovers without harm -> leftovers; kubelet chains are not leftovers", async (t) => {
  const base = {
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    configz: configz({ mode: "nftables" }),
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5 }),
    nftables: {
      tables: [{ family: "ip" as const, name: "kube-proxy", owner: "kube-proxy" }],
      kubeProxyTableName: "kube-proxy",
      kubeProxy: [
        {
          family: "ip" as const,
          name: "kube-proxy",
          sets: [],
          chains: { total: 10, service: 2, endpoint: 2, external: 0, base: [] },
        },
      ],
      firewalls: [],
    },
  };
  const kubeletOnly = emptyFacts({
    ...base,
    iptables: {
      backends: [
        iptablesBackend({
          totalRules: 3,
          kubeChains: [
            { table: "filter", name: "KUBE-FIREWALL", rules: 1, owner: "kubelet" },
            { table: "mangle", name: "KUBE-KUBELET-CANARY", rules: 0, owner: "kubelet" },
          ],
        }),
      ],
    },
  });
  const clean = judge(kubeletOnly, new Map(), NOW);
  t.equal(clean.verdict, "clean");
  t.same(ids(clean), []);
  const left = emptyFacts({
    ...base,
    ipsets: {
      sets: [
        {
          name: "KUBE-6-CLUSTER-IP",
          type: "hash:ip,port",
          family: "inet6",
          entries: 3,
          references: 0,
          kubeProxy: true,
        },
      ],
    },
  });
  const j = judge(left, new Map(), NOW);
  t.equal(j.verdict, "leftovers");
  t.same(ids(j), ["kube-ipsets-left"]);
  t.equal(j.findings[0]!.evidence.ipv6Sets, 1);
});

t.test("stale and hung syncs", async (t) => {
  const stale = emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 900 }),
  });
  t.ok(ids(judge(stale, new Map(), NOW)).includes("kube-proxy-rules-stale"));
  const hung = emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({
      kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 100,
      kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds: NOW - 100 + 400,
    }),
  });
  const j = judge(hung, new Map(), NOW);
  t.match(j.findings.find((f) => f.id === "kube-proxy-rules-stale")?.title, /hung/);
  const fresh = emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 100 }),
  });
  t.notOk(ids(judge(fresh, new Map(), NOW)).includes("kube-proxy-rules-stale"));
});

t.test("sync failures: nftables counter present > 0 is critical; absent is healthy", async (t) => {
  const failing = emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({
      kubeproxy_sync_proxy_rules_nftables_sync_failures_total: 3,
      kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW,
    }),
  });
  const j = judge(failing, new Map(), NOW);
  t.ok(ids(j).includes("kube-proxy-sync-failing"));
  t.equal(j.verdict, "unhealthy");
});

t.test("kube-proxy not answering while ipvs state is present", async (t) => {
  const f = ipvsNode({ proxyMode: null, kubeProxyMetrics: null, configz: null });
  const j = judge(f, new Map([["kube-proxy-mode", refused]]), NOW);
  t.equal(j.phase, "ipvs");
  t.ok(ids(j).includes("kube-proxy-not-answering"));
});

t.test("deprecation stage follows kube-proxy's version", async (t) => {
  const at = (v: string) =>
    judge(
      ipvsNode({ kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW }, v) }),
      new Map(),
      NOW,
    ).findings.find((f) => f.id === "ipvs-mode-deprecated")?.severity;
  t.equal(at("v1.33.1"), "info");
  t.equal(at("v1.37.0"), "warning");
  t.equal(at("v1.40.2"), "error");
  t.equal(at("v1.43.0"), "critical");
});

t.test("health: 503 with healthy true is draining, not broken", async (t) => {
  const f = ipvsNode({
    kubeProxyHealth: {
      status: 503,
      shape: "v1.33+",
      healthy: true,
      lastUpdated: null,
      currentTime: null,
      nodeEligible: false,
    },
  });
  const j = judge(f, new Map(), NOW);
  t.ok(ids(j).includes("kube-proxy-node-draining"));
  t.notOk(ids(j).includes("kube-proxy-unhealthy"));
});

t.test("a node we cannot place is unknown, never ready", async (t) => {
  const j = judge(
    emptyFacts(),
    new Map([["kube-proxy-mode", { kind: "timeout" as const, message: "slow" }]]),
    NOW,
  );
  t.equal(j.verdict, "unknown");
});

t.test("host nft 1.1.3 with a kube-proxy predating the fix", async (t) => {
  const at = (nft: string, kp: string) =>
    ids(
      judge(
        ipvsNode({
          nftVersion: { version: nft, source: "dpkg" },
          kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW }, kp),
        }),
        new Map(),
        NOW,
      ),
    ).includes("nft-host-newer-than-kube-proxy-supports");
  t.equal(at("1.1.3", "v1.33.10"), true);
  t.equal(at("1.1.3", "v1.33.11"), false);
  t.equal(at("1.1.5", "v1.34.6"), true);
  t.equal(at("1.1.5", "v1.35.4"), false);
  t.equal(at("1.1.3", "v1.32.9"), true);
  t.equal(at("1.1.3", "v1.36.0"), false);
  t.equal(at("1.1.1", "v1.32.9"), false);
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

t.test("dual-stack: one stale IP family makes the node stale, whatever the other says", async (t) => {
  const f = emptyFacts({ ...noKernelState, proxyMode: { mode: "nftables" }, kubeProxyMetrics: metrics({}) });
  // IPv4 synced 5 s ago, IPv6 900 s ago: a sum or a mean of the two would hide it.
  f.kubeProxyMetrics!.metrics["kubeproxy_sync_proxy_rules_last_timestamp_seconds"] = {
    type: "gauge",
    value: NOW - 5 + (NOW - 900),
    series: 2,
    min: NOW - 900,
    max: NOW - 5,
  };
  const stale = judge(f, new Map(), NOW).findings.find((x) => x.id === "kube-proxy-rules-stale");
  t.equal(stale?.evidence.lastSyncAgeSeconds, 900);
});

t.test("a failed kernel-state probe: never clean or ready", async (t) => {
  const nftablesNode = emptyFacts({
    ...noKernelState,
    nftables: null,
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5 }),
  });
  const nftFailed = new Map([["nftables", { kind: "not-permitted" as const, message: "nft exited 1" }]]);
  const j = judge(nftablesNode, nftFailed, NOW);
  t.same(ids(j), ["scan-incomplete"]);
  t.equal(j.verdict, "unknown");
  const ipvs = judge(
    ipvsNode({ iptables: null }),
    new Map([["iptables", { kind: "timeout" as const, message: "slow" }]]),
    NOW,
  );
  t.equal(ipvs.verdict, "attention");
  t.ok(ids(ipvs).includes("scan-incomplete"));
  // kube-proxy not answering on a kube-proxy-free node is the answer, not a hole in the scan.
  const free = judge(
    emptyFacts(noKernelState),
    new Map([
      ["kube-proxy-mode", refused],
      ["kube-proxy-metrics", refused],
    ]),
    NOW,
  );
  t.equal(free.verdict, "clean");
  t.same(ids(free), ["kube-proxy-free"]);
});

t.test("the deprecation alone does not hold a node back from ready", async (t) => {
  const j = judge(
    ipvsNode({
      kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW }, "v1.40.1"),
    }),
    new Map(),
    NOW,
  );
  t.equal(j.findings.find((f) => f.id === "ipvs-mode-deprecated")?.severity, "error");
  t.equal(j.verdict, "ready");
});
