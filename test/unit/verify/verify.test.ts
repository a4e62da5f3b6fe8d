import t from "tap";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyChecks, type VerifyInput } from "../../../agent/verify/checks.js";
import { renderVerify } from "../../../common/verify-render.js";
import { verifyReport } from "../../../agent/verify/run.js";
import { VerifyResult } from "../../../common/verify-result.js";
import { parseHostPort, serviceAddressFromEnv } from "../../../agent/parse/service-address.js";
import { ToolRunner } from "../../../agent/io/run.js";
import type { NodeFacts, NodeReport } from "../../../agent/report/schema.js";
import { emptyFacts, noKernelState } from "../../helpers/facts.js";
import { reportOf } from "../../helpers/reports.js";
import { kubeRouterNode } from "../../helpers/rules.js";

const NOW = Date.parse("2026-01-01T00:00:00.000Z") / 1000;
const metrics = (over: Record<string, number> = {}): NodeFacts["kubeProxyMetrics"] => ({
  metrics: Object.fromEntries(
    Object.entries({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 10, ...over }).map(([k, v]) => [
      k,
      { type: "counter", value: v, series: 1, min: v, max: v },
    ]),
  ),
  gitVersion: "v1.34.0",
  familyCount: 10,
});
const table = {
  family: "ip" as const,
  name: "kube-proxy",
  sets: [],
  chains: { total: 1, service: 0, endpoint: 0, external: 0, base: [] },
  nodePorts: ["TCP:30080"],
  nodePortsWithEndpoints: ["TCP:30080"],
  nodePortIPs: ["10.0.0.1"],
};
// The node's one address, its primary, which nftables mode's default nodePortAddresses keeps.
const ADDRESSES: NodeFacts["addresses"] = {
  interfaces: [
    {
      name: "eth0",
      kind: null,
      operState: "UP",
      addresses: [{ family: "inet", address: "10.0.0.1", prefixLen: 24, scope: "global" }],
    },
  ],
  primary: { ipv4: "10.0.0.1", ipv6: null, source: "default-route" },
};
// A switch that lost nothing; test/unit/verify/parity.test.ts walks the other states.
const COMPARED_CLEAN: NodeFacts["parity"] = {
  state: "compared",
  path: "/var/lib/proxyscope/ipvs-snapshot.json",
  takenAt: NOW - 600,
  ageSeconds: 600,
  maxAgeSeconds: 86_400,
  counts: { same: 3, missingAfter: 0, endpointsDiffer: 0, newAfter: 0 },
  services: [],
  truncated: false,
};
function report(over: Partial<NodeFacts> = {}): NodeReport {
  return reportOf(
    emptyFacts({
      ...noKernelState,
      nftables: { tables: [], kubeProxyTableName: "kube-proxy", kubeProxy: [table], firewalls: [] },
      proxyMode: { mode: "nftables" },
      kubeProxyMetrics: metrics(),
      parity: COMPARED_CLEAN,
      addresses: ADDRESSES,
      ...over,
    }),
    {},
    new Date(NOW * 1000),
  );
}
const connected: VerifyInput["connect"] = {
  kind: "done",
  address: "10.96.0.1:443",
  outcome: { ok: true, localAddress: null, durationMs: 1 },
};
const run = (over: Partial<VerifyInput>) =>
  Object.fromEntries(
    verifyChecks({ report: report(), second: null, syncWindowS: 0, connect: connected, ...over }).map((c) => [
      c.id,
      c,
    ]),
  );

t.test("a clean node passes every check", async (t) => {
  const c = run({});
  t.same(
    Object.values(c).map((x) => [x.id, x.status]),
    Object.keys(c).map((id) => [id, id === "nodeport-connect" ? "skipped" : "ok"]),
    "ok, but the NodePort connect: not asked (it sends traffic)",
  );
  t.equal(Object.keys(c).length, 13);
});

t.test("each leftover fails its own check and only it", async (t) => {
  const cases: [Partial<NodeFacts>, string, RegExp][] = [
    [{ proxyMode: { mode: "ipvs" } }, "proxy-mode", /answers "ipvs"/],
    [
      {
        kubeIpvs0: {
          present: true,
          kind: "dummy",
          operState: "DOWN",
          flags: [],
          addresses: [{ family: "inet", address: "10.96.0.1", prefixLen: 32 }],
        },
      },
      "kube-ipvs0",
      /black hole for 10\.96\.0\.1/,
    ],
    // An up kube-ipvs0 (networkd, NetworkManager) also holds the kernel's fe80:: address: no Service IP,
    // so it is not named a black hole; the link itself still fails the check.
    [
      {
        kubeIpvs0: {
          present: true,
          kind: "dummy",
          operState: "UNKNOWN",
          flags: ["BROADCAST", "NOARP", "UP", "LOWER_UP"],
          addresses: [
            { family: "inet", address: "10.96.0.1", prefixLen: 32 },
            { family: "inet6", address: "fe80::7c40:24ff:fe9c:16f8", prefixLen: 64 },
          ],
        },
      },
      "kube-ipvs0",
      /^present with 1 addresses, a black hole for 10\.96\.0\.1$/,
    ],
    [
      {
        ipsets: {
          sets: [
            {
              name: "KUBE-6-CLUSTER-IP",
              type: "hash:ip,port",
              family: "inet6",
              entries: 0,
              references: 0,
              kubeProxy: true,
            },
            { name: "mine", type: "hash:ip", family: "inet", entries: 0, references: 0, kubeProxy: false },
          ],
        },
      },
      "kube-proxy-ipsets",
      /^1 left: KUBE-6-CLUSTER-IP$/,
    ],
    [
      { nftables: { tables: [], kubeProxyTableName: "kp", kubeProxy: [], firewalls: [] } },
      "nftables-table",
      /no table ip\/ip6 kp/,
    ],
    [
      { kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 301 }) },
      "last-sync",
      /301 s ago \(limit 300 s\)/,
    ],
    [
      {
        ipvs: {
          available: true,
          virtualServerCount: 1,
          realServerCount: 0,
          schedulers: {},
          virtualServers: [],
          timeouts: null,
        },
      },
      "ipvs-virtual-servers",
      /^1 left$/,
    ],
  ];
  for (const [facts, id, why] of cases) {
    const checks = verifyChecks({ report: report(facts), second: null, syncWindowS: 0, connect: connected });
    t.same(
      checks.filter((c) => c.status !== "ok" && c.id !== "nodeport-connect").map((c) => c.id),
      // The NodePort line reads the rules of the mode kube-proxy answers: ipvs mode's sets are not in this report.
      id === "proxy-mode" ? [id, "nodeport-addresses"] : [id],
      id,
    );
    t.match(checks.find((c) => c.id === id)?.detail, why);
  }
});

t.test("iptables chains: kube-proxy's fail, kubelet's and unknown ones do not", async (t) => {
  const backend = (
    chains: { table: string; name: string; owner: "kubelet" | "kube-proxy-ipvs" | "unknown" }[],
    patternCounts = {},
  ) => ({
    iptables: {
      backends: [
        {
          backend: "legacy" as const,
          family: "ipv4" as const,
          read: true as const,
          totalRules: 3,
          kubeChains: chains.map((c) => ({ ...c, rules: 1 })),
          patternCounts,
          foreignJumps: [],
          policies: {},
          nodePortAccepts: [],
          firewallChains: {},
        },
      ],
    },
  });
  const kubelet = run({
    report: report(
      backend([
        { table: "filter", name: "KUBE-FIREWALL", owner: "kubelet" },
        { table: "nat", name: "KUBE-KUBELET-CANARY", owner: "kubelet" },
      ]),
    ),
  });
  t.equal(kubelet["kube-proxy-iptables-chains"]?.status, "ok");
  const left = run({
    report: report(
      backend([{ table: "nat", name: "KUBE-NODE-PORT", owner: "kube-proxy-ipvs" }], { "KUBE-SVC-*": 3 }),
    ),
  });
  t.equal(
    left["kube-proxy-iptables-chains"]?.detail,
    "2 left: legacy ipv4 nat/KUBE-NODE-PORT, legacy ipv4 3× KUBE-SVC-*",
  );
});

t.test("sync failures: single read must be zero; two reads must not rise", async (t) => {
  const failing = report({
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_nftables_sync_failures_total: 4 }),
  });
  t.equal(run({ report: failing })["sync-failures"]?.status, "fail");
  const later = (n: number) => ({
    facts: metrics({ kubeproxy_sync_proxy_rules_nftables_sync_failures_total: n }),
    error: null,
    at: NOW + 10,
  });
  t.same(
    run({ report: failing, syncWindowS: 10, second: later(4) })["sync-failures"],
    {
      id: "sync-failures",
      name: "nftables sync failures not rising",
      status: "ok",
      detail: "4 over 10 s",
    },
    "old failures that stopped are not a failure",
  );
  t.equal(
    run({ report: failing, syncWindowS: 10, second: later(6) })["sync-failures"]?.detail,
    "rose from 4 to 6 in 10 s",
  );
  t.match(
    run({ report: failing, syncWindowS: 10, second: later(0) })["sync-failures"]?.detail,
    /restarted during the window/,
  );
  const lost = run({
    report: failing,
    syncWindowS: 10,
    second: { facts: null, error: "ECONNREFUSED", at: NOW },
  });
  t.same(
    [lost["sync-failures"]?.status, lost["sync-failures"]?.detail],
    ["not-run", "second /metrics read failed: ECONNREFUSED"],
  );
  // Absent on a healthy 1.33+ kube-proxy means zero, not "unknown".
  t.equal(run({})["sync-failures"]?.detail, "0 (single read)");
});

t.test("connect: not run fails, skipped does not", async (t) => {
  const none = verifyChecks({
    report: report(),
    second: null,
    syncWindowS: 0,
    connect: { kind: "no-address" },
  });
  const text = renderVerify({
    schemaVersion: "1",
    node: "n1",
    checkedAt: new Date().toISOString(),
    passed: false,
    checks: none,
  });
  t.match(text, /^Service connect \(from the host network\) {3,}FAIL \(not run: no Service address/m);
  t.match(text, /^proxy mode \(\/proxyMode\) {20,}ok$/m, "padded like verify.sh's %-46s");
  const skipped = verifyChecks({
    report: report(),
    second: null,
    syncWindowS: 0,
    connect: { kind: "skipped" },
  });
  t.same(skipped.at(-4), {
    id: "service-connect",
    name: "Service connect (from the host network)",
    status: "skipped",
    detail: "--skip-connect",
  });
});

t.test("service address: flag syntax and the pod environment", async (t) => {
  t.same(parseHostPort("10.96.0.1:443"), { host: "10.96.0.1", port: 443 });
  t.same(parseHostPort("[fd00::1]:443"), { host: "fd00::1", port: 443 });
  for (const bad of [
    "kubernetes:443",
    "10.96.0.1",
    "10.96.0.1:0",
    "10.96.0.1:70000",
    "fd00::1:443",
    "1.2.3.256:1",
  ])
    t.equal(parseHostPort(bad), null, bad);
  t.equal(
    serviceAddressFromEnv({ KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" }),
    "[fd00::1]:443",
  );
  t.equal(serviceAddressFromEnv({ KUBERNETES_SERVICE_HOST: "10.96.0.1" }), undefined);
});

t.test("the sync window reads kube-proxy's /metrics twice, for real", async (t) => {
  let reads = 0;
  const server = createServer((req, res) => {
    reads++;
    res.setHeader("content-type", "text/plain; version=0.0.4");
    res.end(
      [
        "# TYPE kubeproxy_sync_proxy_rules_nftables_sync_failures_total counter",
        `kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family="IPv4"} ${reads * 3}`,
        "# TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds gauge",
        `kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} ${Date.now() / 1000}`,
        "",
      ].join("\n"),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const first = {
    ...report({ kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_nftables_sync_failures_total: 0 }) }),
    scannedAt: new Date().toISOString(),
  };
  const input = {
    hostRoot: "/",
    procRoot: "/proc",
    sysRoot: "/sys",
    tools: new ToolRunner(),
    kubeProxyMetricsUrl: url,
    kubeProxyHealthUrl: url,
    nodeIPs: [],
    callTimeoutMs: 60_000,
    probeTimeoutMs: 120_000,
  };
  const v = await verifyReport(first, input, {
    syncWindowS: 0.2,
    serviceAddress: null,
    skipConnect: true,
    connectTimeoutMs: 1000,
  });
  VerifyResult.parse(v);
  t.equal(reads, 1, "one more read after the window");
  const sync = v.checks.find((c) => c.id === "sync-failures");
  t.equal(sync?.status, "fail");
  // The span runs from the scan's time to the second read: at least the window, more on a busy machine.
  const span = Number(/^rose from 0 to 3 in (\d+(?:\.\d)?) s$/.exec(sync?.detail ?? "")?.[1] ?? NaN);
  t.ok(span >= 0.2, `the window actually waited (${sync?.detail})`);
  t.equal(v.checks.find((c) => c.id === "last-sync")?.status, "ok", "freshness from the later read");
  t.equal(v.passed, false);
});

t.test(
  "kube-router's virtual servers are kept, not left: the ipvs check passes and names them",
  async (t) => {
    const f = kubeRouterNode();
    const checks = verifyChecks({
      report: report({ addresses: f.addresses, ipsets: f.ipsets, ipvs: f.ipvs, iptables: f.iptables }),
      second: null,
      syncWindowS: 0,
      connect: connected,
    });
    const ipvs = checks.find((c) => c.id === "ipvs-virtual-servers");
    t.equal(ipvs?.status, "ok");
    t.match(ipvs?.detail, /^3 of kube-router's service proxy kept \(TCP 10\.96\.0\.1:443/);
  },
);
