import t from "tap";
import { AgentMetrics } from "../../../agent/metrics/agent-metrics.js";
import { renderScan } from "../../../agent/server/rendered-scan.js";
import { FINDING_IDS, FINDING_NEEDS } from "../../../agent/rules/catalogue.js";
import { metrics } from "../../helpers/facts.js";
import { movedWithBlackHole, reportOf } from "../../helpers/reports.js";

/** Every sample of the exposition as "name{labels} value" lines, comments dropped. */
async function samples(m: AgentMetrics): Promise<string[]> {
  return (await m.exposition()).split("\n").filter((l) => l !== "" && !l.startsWith("#"));
}
const value = (lines: string[], series: string) =>
  lines.find((l) => l.startsWith(`${series} `))?.slice(series.length + 1);

t.test("before the first scan only build info and the scan counters exist", async (t) => {
  const lines = await samples(new AgentMetrics({ version: "0.1.0", revision: "0123abc" }));
  t.same(lines, [
    'proxyscope_build_info{version="0.1.0",revision="0123abc"} 1',
    "proxyscope_scans_total 0",
    "proxyscope_scan_overruns_total 0",
    "proxyscope_scan_failures_total 0",
    "proxyscope_scan_heap_releases_total 0",
    "proxyscope_scan_heap_released_bytes_total 0",
  ]);
});

t.test("a moved node with a black hole: every gauge from the report", async (t) => {
  const m = new AgentMetrics({ version: "0.1.0" });
  const report = reportOf(movedWithBlackHole());
  m.recordScan((await renderScan(report)).metrics);
  const lines = await samples(m);
  t.equal(value(lines, 'proxyscope_node_phase{phase="nftables"}'), "1");
  t.equal(value(lines, 'proxyscope_node_phase{phase="ipvs"}'), "0");
  t.equal(lines.filter((l) => l.startsWith("proxyscope_node_phase{")).length, 5);
  t.equal(value(lines, 'proxyscope_node_verdict{verdict="unhealthy"}'), "1");
  t.equal(lines.filter((l) => l.startsWith("proxyscope_node_verdict{")).length, 7);
  t.equal(value(lines, "proxyscope_kernel_nftables_capable"), "1");
  t.equal(value(lines, "proxyscope_ipvs_virtual_servers"), "0");
  t.equal(value(lines, "proxyscope_kube_ipvs0_present"), "1");
  t.equal(value(lines, "proxyscope_kube_ipvs0_addresses"), "3");
  t.equal(value(lines, "proxyscope_black_holed_addresses"), "3");
  t.equal(value(lines, "proxyscope_kube_proxy_ipsets"), "2");
  // KUBE-NODE-PORT and KUBE-SERVICES; kubelet's KUBE-FIREWALL and canary are not counted.
  t.equal(value(lines, 'proxyscope_kube_proxy_iptables_chains{backend="nft",family="ipv4"}'), "2");
  // The kernel has no legacy tables (the probe asked /proc): read, and 0.
  t.equal(value(lines, 'proxyscope_kube_proxy_iptables_chains{backend="legacy",family="ipv4"}'), "0");
  const unread = new AgentMetrics({ version: "0.1.0" });
  const base = movedWithBlackHole();
  unread.recordScan(
    (
      await renderScan(
        reportOf({
          ...base,
          iptables: {
            backends: [
              ...(base.iptables?.backends.filter((b) => b.backend === "nft") ?? []),
              {
                backend: "legacy",
                family: "ipv4",
                read: false,
                why: { kind: "garbage", message: "line 18" },
              },
            ],
          },
        }),
      )
    ).metrics,
  );
  const unreadLines = (await unread.exposition()).split("\n");
  t.equal(value(unreadLines, 'proxyscope_probe_success{probe="iptables"}'), "0", "#13.1: a backend not read");
  t.notOk(
    unreadLines.some((l) => l.includes('backend="legacy"')),
    "a backend not read is absent, not 0",
  );
  t.equal(value(lines, 'proxyscope_nftables_kube_proxy_table_present{family="ip"}'), "1");
  t.equal(value(lines, 'proxyscope_nftables_kube_proxy_table_present{family="ip6"}'), "0");
  t.equal(
    value(lines, "proxyscope_kube_proxy_last_sync_timestamp_seconds"),
    String(Date.parse("2026-11-29T12:00:00Z") / 1000 - 42),
    "kube-proxy's own timestamp, not an age",
  );
  t.equal(
    value(lines, "proxyscope_kube_proxy_sync_failures_total"),
    "0",
    "nftables mode, counter absent: zero",
  );
  t.equal(value(lines, "proxyscope_kube_proxy_cleanup_failures_total"), "2");
  const text = await m.exposition();
  t.match(text, /# TYPE proxyscope_kube_proxy_sync_failures_total counter/);
  t.match(text, /# TYPE proxyscope_kube_proxy_cleanup_failures_total counter/);
  const info = lines.filter((l) => l.startsWith("proxyscope_node_info{"));
  t.equal(info.length, 1, "one info series per node");
  t.match(info[0], /kernel_release="[^"]+"/);
  // The info series must not change during the migration (a label that does breaks every join and
  // graph over it at the switch): the phase has its own gauge.
  t.notMatch(info[0], /phase=/, "no phase label on the info series");
  t.equal(value(lines, 'proxyscope_node_phase{phase="nftables"}'), "1", "the phase in its own gauge");
  t.match(info[0], / 1$/);
  // Every finding id on every node: the active ones 1, those whose inputs were all read 0, the rest absent.
  const active = lines.filter((l) => l.startsWith("proxyscope_finding_active{"));
  let zeros = 0;
  for (const id of FINDING_IDS) {
    const on = report.findings.some((f) => f.id === id);
    const unread = FINDING_NEEDS.get(id)!.filter((k) => report.facts[k] === null);
    const want = on ? "1" : unread.length > 0 ? undefined : "0";
    if (want === "0") zeros++;
    t.equal(
      value(lines, `proxyscope_finding_active{id="${id}"}`),
      want,
      `${id} (unread: ${unread.join(",")})`,
    );
  }
  t.ok(zeros >= 10, `most checks say 0 (${zeros})`);
  t.equal(
    active.length,
    FINDING_IDS.length -
      FINDING_IDS.filter((id) => value(lines, `proxyscope_finding_active{id="${id}"}`) === undefined).length,
  );
  t.equal(value(lines, 'proxyscope_finding{id="kube-ipvs0-black-hole",severity="critical"}'), "1");
  for (const severity of ["info", "warning", "error", "critical"]) {
    const n = report.findings.filter((f) => f.severity === severity).length;
    t.equal(value(lines, `proxyscope_findings{severity="${severity}"}`), String(n), severity);
  }
  t.equal(lines.filter((l) => l.startsWith("proxyscope_finding{")).length, report.findings.length);
  t.equal(value(lines, 'proxyscope_probe_success{probe="kernel"}'), "1");
  t.equal(value(lines, 'proxyscope_probe_duration_seconds{probe="kernel"}'), "0.25");
  t.equal(
    value(lines, "proxyscope_last_scan_timestamp_seconds"),
    String(Date.parse("2026-11-29T12:00:00Z") / 1000),
  );
  t.equal(value(lines, "proxyscope_last_scan_duration_seconds"), "1.5");
  t.equal(value(lines, "proxyscope_scans_total"), "1");
});

t.test("a failed probe shows as failed and the gauges it feeds are absent, not 0", async (t) => {
  const m = new AgentMetrics({ version: "0.1.0" });
  m.recordScan((await renderScan(reportOf(movedWithBlackHole()))).metrics);
  const failed = movedWithBlackHole({ kubeIpvs0: null, nftables: null, kubeProxyMetrics: null });
  m.recordScan(
    (
      await renderScan(
        reportOf(failed, {
          "kube-ipvs0": {
            kind: "missing-tool",
            message: "ip not found in /nowhere",
            command: "ip -d -j addr show",
          },
          nftables: { kind: "not-permitted", message: "nft exited 1: Operation not permitted" },
          "kube-proxy-metrics": { kind: "unreachable", message: "connect ECONNREFUSED 127.0.0.1:10249" },
        }),
      )
    ).metrics,
  );
  const lines = await samples(m);
  t.equal(value(lines, 'proxyscope_probe_success{probe="kube-ipvs0"}'), "0");
  t.equal(value(lines, 'proxyscope_probe_success{probe="nftables"}'), "0");
  t.equal(value(lines, 'proxyscope_probe_success{probe="kube-proxy-metrics"}'), "0");
  t.equal(value(lines, 'proxyscope_probe_success{probe="ipvs"}'), "1");
  const text = await m.exposition();
  for (const gone of [
    "proxyscope_kube_ipvs0_present",
    "proxyscope_kube_ipvs0_addresses",
    "proxyscope_black_holed_addresses",
    "proxyscope_nftables_kube_proxy_table_present",
    "proxyscope_kube_proxy_last_sync_timestamp_seconds",
    "proxyscope_kube_proxy_sync_failures_total",
    "proxyscope_kube_proxy_cleanup_failures_total",
  ]) {
    t.notOk(text.includes(gone), `${gone} is absent`);
  }
  t.match(
    lines.find((l) => l.startsWith("proxyscope_node_info{")),
    /kube_proxy_version="unread"/,
    "a failed probe is unread in the info labels, not a version",
  );
  t.equal(value(lines, "proxyscope_ipvs_virtual_servers"), "0", "the other probes' gauges stay");
  t.equal(value(lines, "proxyscope_kube_proxy_ipsets"), "2");
  t.notOk(text.includes('id="kube-ipvs0-black-hole"'), "the black-hole finding dropped out with its probe");
  t.notOk(
    lines.some((l) => l.startsWith('proxyscope_finding_active{id="nftables-table-missing"}')),
    "nor does a check whose input was not read say 0",
  );
  t.equal(
    value(lines, 'proxyscope_finding_active{id="ipvs-virtual-servers-left"}'),
    "0",
    "checks whose inputs were read still say 0",
  );
  t.equal(value(lines, "proxyscope_scans_total"), "2");

  // And they come back when the probe recovers.
  m.recordScan((await renderScan(reportOf(movedWithBlackHole()))).metrics);
  const back = await samples(m);
  t.equal(value(back, "proxyscope_black_holed_addresses"), "3");
  t.equal(value(back, 'proxyscope_nftables_kube_proxy_table_present{family="ip"}'), "1");
});

t.test("a finding that clears drops out; black holes read 0 once kube-ipvs0 is gone", async (t) => {
  const m = new AgentMetrics({ version: "0.1.0" });
  m.recordScan((await renderScan(reportOf(movedWithBlackHole()))).metrics);
  t.match(await m.exposition(), /proxyscope_finding\{id="kube-ipvs0-black-hole",severity="critical"\} 1/);
  m.recordScan(
    (
      await renderScan(
        reportOf(
          movedWithBlackHole({
            kubeIpvs0: { present: false, kind: null, operState: null, flags: [], addresses: [] },
          }),
        ),
      )
    ).metrics,
  );
  const lines = await samples(m);
  t.notOk(lines.some((l) => l.startsWith("proxyscope_finding{") && l.includes("kube-ipvs0-black-hole")));
  t.equal(value(lines, 'proxyscope_finding_active{id="kube-ipvs0-black-hole"}'), "0", "cleared reads 0");
  t.equal(value(lines, "proxyscope_black_holed_addresses"), "0");
  t.equal(value(lines, "proxyscope_kube_ipvs0_present"), "0");
  t.equal(value(lines, 'proxyscope_findings{severity="critical"}'), "0");
});

t.test("kube-proxy counters: not applicable is absent, unknown mode is absent", async (t) => {
  const ipvsMode = new AgentMetrics({ version: "0.1.0" });
  ipvsMode.recordScan(
    (
      await renderScan(
        reportOf(
          movedWithBlackHole({
            proxyMode: { mode: "ipvs" },
            kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_iptables_restore_failures_total: 4 }),
          }),
        ),
      )
    ).metrics,
  );
  const lines = await samples(ipvsMode);
  t.equal(value(lines, "proxyscope_kube_proxy_sync_failures_total"), "4");
  t.notOk(
    lines.some((l) => l.startsWith("proxyscope_kube_proxy_cleanup_failures")),
    "no nftables cleanup in ipvs mode",
  );
  t.notOk(
    lines.some((l) => l.startsWith("proxyscope_kube_proxy_last_sync_timestamp_seconds")),
    "gauge not exported",
  );

  const noMode = new AgentMetrics({ version: "0.1.0" });
  noMode.recordScan(
    (
      await renderScan(
        reportOf(movedWithBlackHole({ proxyMode: null }), {
          "kube-proxy-mode": { kind: "http-status", message: "answered 500" },
        }),
      )
    ).metrics,
  );
  const text = await noMode.exposition();
  t.notOk(text.includes("proxyscope_kube_proxy_sync_failures"));
  t.notOk(text.includes("proxyscope_kube_proxy_cleanup_failures"));
});

t.test("labels stay bounded on a node with 10,000 Services", async (t) => {
  const addresses = Array.from({ length: 10_000 }, (_, i) => ({
    family: "inet" as const,
    address: `10.96.${i >> 8}.${i & 255}`,
    prefixLen: 32,
  }));
  const m = new AgentMetrics({ version: "0.1.0" });
  m.recordScan(
    (
      await renderScan(
        reportOf(
          movedWithBlackHole({
            kubeIpvs0: { present: true, kind: "dummy", operState: "DOWN", flags: [], addresses },
            iptables: {
              backends: [
                {
                  backend: "nft",
                  family: "ipv4",
                  read: true,
                  totalRules: 200_000,
                  kubeChains: [{ table: "nat", name: "KUBE-SERVICES", rules: 10_000, owner: "kube-proxy" }],
                  patternCounts: { "KUBE-SVC-*": 10_000, "KUBE-SEP-*": 100_000 },
                  foreignJumps: [],
                  policies: {},
                  nodePortAccepts: [],
                  firewallChains: {},
                },
              ],
            },
          }),
        ),
      )
    ).metrics,
  );
  const lines = await samples(m);
  t.equal(
    value(lines, "proxyscope_kube_ipvs0_addresses"),
    "10000",
    "the full count, not the report's cut list",
  );
  t.equal(value(lines, "proxyscope_black_holed_addresses"), "10000");
  t.equal(value(lines, 'proxyscope_kube_proxy_iptables_chains{backend="nft",family="ipv4"}'), "110001");
  t.notOk(
    lines.some((l) => l.includes("10.96.")),
    "no address in any label",
  );
  t.ok(lines.length < 120, `${lines.length} series`);
});

t.test("IPVS traffic totals are counters; without /proc/net/ip_vs_stats they are absent", async (t) => {
  const base = movedWithBlackHole();
  const stats = {
    connections: 10,
    incomingPackets: 52,
    outgoingPackets: 50,
    incomingBytes: 12784,
    outgoingBytes: 3680,
  };
  const m = new AgentMetrics({ version: "0.1.0" });
  m.recordScan((await renderScan(reportOf(movedWithBlackHole({ ipvs: { ...base.ipvs!, stats } })))).metrics);
  const lines = await samples(m);
  t.equal(value(lines, "proxyscope_ipvs_connections_total"), "10");
  t.equal(value(lines, "proxyscope_ipvs_incoming_packets_total"), "52");
  t.equal(value(lines, "proxyscope_ipvs_outgoing_packets_total"), "50");
  t.equal(value(lines, "proxyscope_ipvs_incoming_bytes_total"), "12784");
  t.equal(value(lines, "proxyscope_ipvs_outgoing_bytes_total"), "3680");
  t.match(await m.exposition(), /# TYPE proxyscope_ipvs_incoming_bytes_total counter/);

  m.recordScan(
    (
      await renderScan(
        reportOf(
          movedWithBlackHole({
            ipvs: { ...base.ipvs!, stats: null, statsError: { kind: "io", message: "gone" } },
          }),
        ),
      )
    ).metrics,
  );
  const text = await m.exposition();
  t.notOk(text.includes("proxyscope_ipvs_connections_total"), "unread totals are absent, not 0");
  t.match(text, /proxyscope_ipvs_virtual_servers 0/, "the table's gauges stay");
});

t.test(
  "established IPVS connections through kube-proxy: one node-level gauge; unread is absent",
  async (t) => {
    const { recordedConnNode } = await import("../../helpers/recorded-conn-node.js");
    const m = new AgentMetrics({ version: "0.1.0" });
    m.recordScan((await renderScan(reportOf(recordedConnNode()))).metrics);
    const lines = await samples(m);
    // The recorded node (test/fixtures/ipvs/conn/live): 7 through kube-proxy's, 1 through a VIP that is not.
    t.equal(value(lines, "proxyscope_ipvs_kube_proxy_established_connections"), "7");
    t.notOk(
      lines.some((l) => l.startsWith("proxyscope_ipvs_kube_proxy_established_connections{")),
      "no label at all: which Services is in the report, not in series",
    );
    m.recordScan(
      (
        await renderScan(
          reportOf(recordedConnNode({ ipvsConnections: null }), {
            "ipvs-connections": {
              kind: "output-cap",
              message: "/proc/net/ip_vs_conn is larger than the cap",
            },
          }),
        )
      ).metrics,
    );
    t.notOk(
      (await m.exposition()).includes("proxyscope_ipvs_kube_proxy_established_connections "),
      "not read: absent, never 0",
    );
  },
);
