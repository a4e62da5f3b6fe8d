/*
 * STAND-IN for kube-proxy's own HTTP endpoints. This is NOT kube-proxy: it programs no rules and
 * watches no API server. It answers /proxyMode, /configz, /metrics (metrics address) and /healthz,
 * /livez (health address) in kube-proxy's formats, so probes can be tested where a real kube-proxy
 * cannot run (network namespaces, User-Mode Linux). Plain `node`, no dependencies.
 *
 * Formats, from kubernetes/kubernetes (see test/fixtures/kube-proxy/README.md for the exact files):
 * - /proxyMode: cmd/kube-proxy/app/server.go serveMetrics, `fmt.Fprintf(w, "%s", proxyMode)`,
 *   text/plain, no newline; an empty mode is defaulted to iptables first (server_linux.go
 *   platformApplyDefaults), so /proxyMode and /configz both say "iptables".
 * - /configz: component-base/configz (JSON of map name -> config) under "kubeproxy.config.k8s.io";
 *   before v1.36 the internal config (pkg/proxy/apis/config/types.go: Go field names, metav1.Duration
 *   as Go duration strings); from v1.36 the v1alpha1 type with kind/apiVersion (PR #136044).
 * - /metrics: pkg/proxy/metrics/metrics.go names, types, HELP ("[ALPHA] " prefixed by component-base)
 *   and RegisterMetrics(mode); `ip_family` label from v1.33 (PR #129173), which also makes the
 *   failure counters appear only after a first failure; kubernetes_build_info (component-base).
 * - /healthz, /livez: pkg/proxy/healthcheck/proxy_health.go; JSON struct from v1.33, fmt with Go
 *   time.String() before.
 *
 * Usage: node dist/test/standins/kube-proxy.js SCENARIO.json
 * Prints "ready <metricsPort> <healthPort>" once listening; exits on SIGTERM/SIGINT. On SIGHUP it
 * reads the scenario file again (counters, times, faults; not the addresses it listens on) and prints
 * "reloaded <n>": a test changes what kube-proxy says without restarting it.
 */
import http from "node:http";
import net from "node:net";
import { readFileSync } from "node:fs";

type Endpoint = "proxyMode" | "configz" | "metrics" | "healthz" | "livez";
type Family = "IPv4" | "IPv6";

export interface Fault {
  /** Do not listen on this endpoint's address at all (every endpoint on it is refused). */
  refuse?: boolean;
  /** Answer only after this long (a test of lateness; a fault test wants `hang`). */
  slowMs?: number;
  /** Accept the request and never answer: unmistakably a fault, however loaded the machine. */
  hang?: boolean;
  garbage?: boolean;
  /** Answer 200 with this many bytes. */
  huge?: number;
  status?: number;
}

/** Seconds since the epoch, or seconds before now (resolved on every request). */
export type TimeSpec = { unix: number } | { agoSeconds: number };

export interface Scenario {
  mode: "iptables" | "ipvs" | "nftables" | "";
  version: string;
  metricsAddress?: string;
  healthAddress?: string;
  /**
   * SO_REUSEPORT on both listeners, so another process of the same uid can listen on the very same
   * address:port (a test of "every listener there must be kube-proxy's").
   */
  reusePort?: boolean;
  dualStack?: boolean;
  nodeIPs?: string[];
  /** Per metric name: one number (IPv4, or the unlabeled series) or a number per family. null: not exported. */
  counters?: Record<string, number | null | Partial<Record<Family, number>>>;
  /**
   * Services with a Local traffic policy and no local endpoint, per policy (the gauge's traffic_policy label;
   * the ipvs/nftables proxiers set "internal" and "external" on every sync). On the first IP family only.
   */
  noLocalEndpoints?: { internal?: number; external?: number };
  lastSync?: TimeSpec | null;
  lastQueued?: TimeSpec | null;
  /** The proxier's health (no sync overdue). */
  healthy?: boolean;
  /** false: the node is being deleted or carries ToBeDeletedByClusterAutoscaler. */
  nodeEligible?: boolean;
  config?: {
    nodePortAddresses?: string[] | null;
    featureGates?: Record<string, boolean> | null;
    ipvs?: {
      scheduler?: string;
      strictARP?: boolean;
      tcpTimeout?: string;
      tcpFinTimeout?: string;
      udpTimeout?: string;
      excludeCIDRs?: string[] | null;
    };
    conntrackTcpBeLiberal?: boolean;
    clusterCIDRs?: string[];
    detectLocalMode?: string;
    metricsBindAddress?: string;
    healthzBindAddress?: string;
  };
  faults?: Partial<Record<Endpoint, Fault>>;
  /**
   * healthCheckNodePorts of externalTrafficPolicy: Local LoadBalancer Services, served like kube-proxy's
   * service health server with nodePortAddresses matching all: on 0.0.0.0, which Go binds dual-stack
   * ([::] in /proc/net/tcp6), answering its JSON (pkg/proxy/healthcheck/service_health.go hcHandler).
   */
  healthCheckNodePorts?: { port: number; namespace: string; name: string; localEndpoints: number }[];
}

const started = Date.now();

// ---------------------------------------------------------------------------- formatting like Go

/** strconv.FormatFloat(v, 'g', -1, 64), as client_golang writes sample values and `le` labels. */
export function goFloat(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  if (v === 0) return "0";
  const [mant, e] = v.toExponential().split("e") as [string, string];
  const exp = Number(e);
  if (exp < -4 || exp >= 6) return `${mant}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  return String(v);
}

/** metav1.Duration's JSON: time.Duration.String() ("0s", "30s", "15m0s", "24h0m0s"). */
function goDuration(seconds: number): string {
  if (seconds === 0) return "0s";
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

function nanosNow(ms: number): bigint {
  // Date has milliseconds; the sub-millisecond digits come from the monotonic clock, as Go has them.
  return BigInt(ms) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
}

function fraction(nanos: bigint): string {
  const f = (nanos % 1_000_000_000n).toString().padStart(9, "0").replace(/0+$/, "");
  return f === "" ? "" : `.${f}`;
}

/** time.Time.MarshalJSON: RFC 3339 with nanoseconds, trailing zeros trimmed, UTC as Z. */
function rfc3339Nano(nanos: bigint): string {
  const d = new Date(Number(nanos / 1_000_000n));
  return `${d.toISOString().slice(0, 19)}${fraction(nanos)}Z`;
}

/** time.Time.String() for a UTC time read from time.Now(): the monotonic reading ("m=±s.nnnnnnnnn") follows. */
function goTimeString(nanos: bigint | null): string {
  if (nanos === null) return "0001-01-01 00:00:00 +0000 UTC";
  const iso = new Date(Number(nanos / 1_000_000n)).toISOString();
  let mono = nanos - BigInt(started) * 1_000_000n;
  const sign = mono < 0n ? "-" : "+";
  if (mono < 0n) mono = -mono;
  const m = `m=${sign}${mono / 1_000_000_000n}.${(mono % 1_000_000_000n).toString().padStart(9, "0")}`;
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction(nanos)} +0000 UTC ${m}`;
}

// ---------------------------------------------------------------------------------- the scenario

function minor(version: string): number {
  const m = /^v?1\.(\d+)/.exec(version);
  if (!m) throw new Error(`version ${JSON.stringify(version)} is not v1.N.x`);
  return Number(m[1]);
}

function resolve(t: TimeSpec | null | undefined, nowMs: number): number | null {
  if (t === null || t === undefined) return null;
  return "unix" in t ? t.unix : nowMs / 1000 - t.agoSeconds;
}

interface Live {
  sc: Scenario;
  minor: number;
  mode: "iptables" | "ipvs" | "nftables";
  families: Family[];
  healthzServed: Map<string, number>;
  livezServed: Map<string, number>;
}

// -------------------------------------------------------------------------------------- /metrics

interface Series {
  labels: [string, string][];
  value: number;
}
interface Hist {
  labels: [string, string][];
  buckets: number[];
  counts: number[];
  sum: number;
  count: number;
}

type FamilyOut =
  | { name: string; help: string; type: "counter" | "gauge"; series: Series[] }
  | { name: string; help: string; type: "histogram"; hist: Hist[] };

function labelText(labels: [string, string][]): string {
  if (labels.length === 0) return "";
  const esc = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
  return `{${labels.map(([k, v]) => `${k}="${esc(v)}"`).join(",")}}`;
}

function render(fams: FamilyOut[]): string {
  let out = "";
  for (const f of [...fams].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const empty = f.type === "histogram" ? f.hist.length === 0 : f.series.length === 0;
    if (empty) continue; // client_golang drops a family with no series
    out += `# HELP ${f.name} ${f.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}\n# TYPE ${f.name} ${f.type}\n`;
    if (f.type === "histogram") {
      for (const h of f.hist) {
        let cum = 0;
        h.buckets.forEach((le, i) => {
          cum += h.counts[i] ?? 0;
          out += `${f.name}_bucket${labelText([...h.labels, ["le", goFloat(le)]])} ${goFloat(cum)}\n`;
        });
        out += `${f.name}_bucket${labelText([...h.labels, ["le", "+Inf"]])} ${goFloat(h.count)}\n`;
        out += `${f.name}_sum${labelText(h.labels)} ${goFloat(h.sum)}\n`;
        out += `${f.name}_count${labelText(h.labels)} ${goFloat(h.count)}\n`;
      }
    } else {
      const sorted = [...f.series].sort((a, b) => (labelText(a.labels) < labelText(b.labels) ? -1 : 1));
      for (const s of sorted) out += `${f.name}${labelText(s.labels)} ${goFloat(s.value)}\n`;
    }
  }
  return out;
}

const exponential = (start: number, factor: number, n: number) =>
  Array.from({ length: n }, (_, i) => start * factor ** i);
const linear = (start: number, width: number, n: number) =>
  Array.from({ length: n }, (_, i) => start + width * i);
// metrics.ExponentialBuckets(0.001, 2, 15)
const SYNC_BUCKETS = exponential(0.001, 2, 15).map((b) => Number(b.toPrecision(12)));
// MergeBuckets(LinearBuckets(0.25,0.25,2), LinearBuckets(1,1,59), LinearBuckets(60,5,12), LinearBuckets(120,30,7))
const NPL_BUCKETS = [
  ...linear(0.25, 0.25, 2),
  ...linear(1, 1, 59),
  ...linear(60, 5, 12),
  ...linear(120, 30, 7),
];

function metricsText(live: Live, nowMs: number): string {
  const { sc, mode } = live;
  const labeled = live.minor >= 33; // PR #129173: *Vec with ip_family
  const fams: FamilyOut[] = [];
  const lastSync = resolve(sc.lastSync === undefined ? { agoSeconds: 2 } : sc.lastSync, nowMs);
  const lastQueued = resolve(
    sc.lastQueued === undefined ? (sc.lastSync ?? { agoSeconds: 2 }) : sc.lastQueued,
    nowMs,
  );
  const syncs = lastSync === null ? 0 : 12;
  const alpha = (h: string) => `[ALPHA] ${h}`;

  const perFamily = (name: string, dflt: number | null): Series[] => {
    const v = sc.counters?.[name];
    if (v === null) return [];
    if (!labeled) return [{ labels: [], value: typeof v === "number" ? v : (v?.IPv4 ?? dflt ?? 0) }];
    const out: Series[] = [];
    for (const fam of live.families) {
      const x = typeof v === "number" ? (fam === "IPv4" ? v : undefined) : v?.[fam];
      const value = x ?? dflt;
      if (value !== null) out.push({ labels: [["ip_family", fam]], value });
    }
    return out;
  };
  // A CounterVec only has a series once it was incremented: a zero failure counter is absent.
  const failures = (name: string): Series[] =>
    perFamily(name, labeled ? null : 0).filter((s) => !labeled || s.value > 0);
  const plain = (name: string, dflt: number): Series[] => {
    const v = sc.counters?.[name];
    if (v === null) return [];
    return [{ labels: [], value: typeof v === "number" ? v : dflt }];
  };
  const hist = (labelsFor: [string, string][][], buckets: number[], at: number, n: number): Hist[] =>
    labelsFor.map((labels) => {
      const counts = buckets.map((b, i) => (b >= at && (i === 0 || buckets[i - 1]! < at) ? n : 0));
      return { labels, buckets, counts, sum: n * at * 0.8, count: n };
    });
  const famLabels: [string, string][][] = labeled ? live.families.map((f) => [["ip_family", f]]) : [[]];
  const histSeries = (buckets: number[], at: number): Hist[] =>
    labeled && syncs === 0 ? [] : hist(famLabels, buckets, at, syncs);
  const gaugeAt = (name: string, t: number | null): Series[] => {
    if (sc.counters?.[name] === null) return [];
    if (labeled)
      return t === null ? [] : live.families.map((f) => ({ labels: [["ip_family", f]], value: t }));
    return [{ labels: [], value: t ?? 0 }];
  };

  // Core metrics, registered for every backend.
  fams.push(
    {
      name: "kubeproxy_sync_proxy_rules_duration_seconds",
      help: alpha("SyncProxyRules latency in seconds"),
      type: "histogram",
      hist: histSeries(SYNC_BUCKETS, 0.016),
    },
    {
      name: "kubeproxy_network_programming_duration_seconds",
      help: alpha("In Cluster Network Programming Latency in seconds"),
      type: "histogram",
      // Observed only for EndpointSlices annotated with a last-change-trigger-time, which the stand-in's
      // (none) are not: from v1.33, a HistogramVec, it is then absent (the real binaries recorded in
      // test/fixtures/kube-proxy/real/ say so); before, a plain histogram, it is there at zero.
      hist: labeled ? [] : hist(famLabels, NPL_BUCKETS, 1, 0),
    },
    {
      name: "kubeproxy_sync_proxy_rules_last_timestamp_seconds",
      help: alpha("The last time proxy rules were successfully synced"),
      type: "gauge",
      series: gaugeAt("kubeproxy_sync_proxy_rules_last_timestamp_seconds", lastSync),
    },
    {
      name: "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds",
      help: alpha("The last time a sync of proxy rules was queued"),
      type: "gauge",
      series: gaugeAt("kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds", lastQueued),
    },
    {
      name: "kubeproxy_sync_proxy_rules_endpoint_changes_pending",
      help: alpha("Pending proxy rules Endpoint changes"),
      type: "gauge",
      series: plain("kubeproxy_sync_proxy_rules_endpoint_changes_pending", 0),
    },
    {
      name: "kubeproxy_sync_proxy_rules_endpoint_changes_total",
      help: alpha("Cumulative proxy rules Endpoint changes"),
      type: "counter",
      series: plain("kubeproxy_sync_proxy_rules_endpoint_changes_total", 57),
    },
    {
      name: "kubeproxy_sync_proxy_rules_service_changes_pending",
      help: alpha("Pending proxy rules Service changes"),
      type: "gauge",
      series: plain("kubeproxy_sync_proxy_rules_service_changes_pending", 0),
    },
    {
      name: "kubeproxy_sync_proxy_rules_service_changes_total",
      help: alpha("Cumulative proxy rules Service changes"),
      type: "counter",
      series: plain("kubeproxy_sync_proxy_rules_service_changes_total", 21),
    },
    {
      name: "kubeproxy_sync_proxy_rules_no_local_endpoints_total",
      help: alpha("Number of services with a Local traffic policy and no endpoints"),
      type: "gauge",
      series:
        syncs === 0
          ? []
          : famLabels.flatMap((fl, i) =>
              (["internal", "external"] as const).map((p) => ({
                labels: [...fl, ["traffic_policy", p]] as [string, string][],
                value: i === 0 ? (sc.noLocalEndpoints?.[p] ?? 0) : 0,
              })),
            ),
    },
    {
      name: "kubeproxy_proxy_healthz_total",
      help: alpha("Cumulative proxy healthz HTTP status"),
      type: "counter",
      series: [...live.healthzServed].map(([code, n]) => ({ labels: [["code", code]], value: n })),
    },
    {
      name: "kubeproxy_proxy_livez_total",
      help: alpha("Cumulative proxy livez HTTP status"),
      type: "counter",
      series: [...live.livezServed].map(([code, n]) => ({ labels: [["code", code]], value: n })),
    },
  );

  if (mode === "iptables") {
    fams.push(
      {
        name: "kubeproxy_iptables_ct_state_invalid_dropped_packets_total",
        help: alpha("packets dropped by iptables to work around conntrack problems"),
        type: "counter",
        series: plain("kubeproxy_iptables_ct_state_invalid_dropped_packets_total", 0),
      },
      {
        name: "kubeproxy_sync_full_proxy_rules_duration_seconds",
        help: alpha("SyncProxyRules latency in seconds for full resyncs"),
        type: "histogram",
        hist: histSeries(SYNC_BUCKETS, 0.032),
      },
      {
        name: "kubeproxy_sync_partial_proxy_rules_duration_seconds",
        help: alpha("SyncProxyRules latency in seconds for partial resyncs"),
        type: "histogram",
        hist: histSeries(SYNC_BUCKETS, 0.008),
      },
      {
        name: "kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total",
        help: alpha("Cumulative proxy iptables partial restore failures"),
        type: "counter",
        series: failures("kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total"),
      },
      {
        name: "kubeproxy_sync_proxy_rules_iptables_total",
        help: alpha("Total number of iptables rules owned by kube-proxy"),
        type: "gauge",
        series: famLabels.flatMap((fl) =>
          [
            ["filter", 9],
            ["nat", 64],
          ].map(([t, n]) => ({
            labels: [...fl, ["table", t as string]] as [string, string][],
            value: n as number,
          })),
        ),
      },
      {
        name: "kubeproxy_sync_proxy_rules_iptables_last",
        help: alpha("Number of iptables rules written by kube-proxy in last sync"),
        type: "gauge",
        series: famLabels.flatMap((fl) =>
          [
            ["filter", 4],
            ["nat", 11],
          ].map(([t, n]) => ({
            labels: [...fl, ["table", t as string]] as [string, string][],
            value: n as number,
          })),
        ),
      },
    );
    if (live.minor >= 31) {
      fams.push({
        name: "kubeproxy_iptables_localhost_nodeports_accepted_packets_total",
        help: alpha("Number of packets accepted on nodeports of loopback interface"),
        type: "counter",
        series: plain("kubeproxy_iptables_localhost_nodeports_accepted_packets_total", 0),
      });
    }
  }
  if (mode === "iptables" || mode === "ipvs") {
    fams.push({
      name: "kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
      help: alpha("Cumulative proxy iptables restore failures"),
      type: "counter",
      series: failures("kubeproxy_sync_proxy_rules_iptables_restore_failures_total"),
    });
  }
  if (mode === "nftables") {
    // Full and partial sync latencies, as the real nftables-mode binaries export them (recorded in
    // test/fixtures/kube-proxy/real/): before v1.33 plain histograms, both there; from v1.33 per-family
    // HistogramVecs, there once observed, and the stand-in's syncs (like a freshly started kube-proxy's)
    // were full ones.
    fams.push(
      {
        name: "kubeproxy_sync_full_proxy_rules_duration_seconds",
        help: alpha("SyncProxyRules latency in seconds for full resyncs"),
        type: "histogram",
        hist: histSeries(SYNC_BUCKETS, 0.032),
      },
      {
        name: "kubeproxy_sync_partial_proxy_rules_duration_seconds",
        help: alpha("SyncProxyRules latency in seconds for partial resyncs"),
        type: "histogram",
        hist: labeled ? [] : hist(famLabels, SYNC_BUCKETS, 0.008, 0),
      },
    );
    fams.push(
      {
        name: "kubeproxy_sync_proxy_rules_nftables_sync_failures_total",
        help: alpha("Cumulative proxy nftables sync failures"),
        type: "counter",
        series: failures("kubeproxy_sync_proxy_rules_nftables_sync_failures_total"),
      },
      {
        name: "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total",
        help: alpha("Cumulative proxy nftables cleanup failures"),
        type: "counter",
        series: failures("kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total"),
      },
    );
    if (live.minor >= 37) {
      const name = "kubeproxy_nftables_localhost_nodeport_rejected_packets_total";
      const v = sc.counters?.[name];
      fams.push({
        name,
        help: alpha(
          "Number of packets rejected on localhost NodePorts. UDP and SCTP are always rejected; TCP is rejected when the localhost NodePort proxy is not running",
        ),
        type: "counter",
        series:
          v === null
            ? []
            : live.families.flatMap((fam) =>
                ["SCTP", "TCP", "UDP"].map((p) => ({
                  labels: [
                    ["ip_family", fam],
                    ["protocol", p],
                  ] as [string, string][],
                  // The whole scenario value is put on IPv4/TCP: the count is what rules read.
                  value: fam === "IPv4" && p === "TCP" ? (typeof v === "number" ? v : (v?.IPv4 ?? 0)) : 0,
                })),
              ),
      });
    }
  }

  fams.push({
    name: "kubernetes_build_info",
    help: "[BETA] A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.",
    type: "gauge",
    series: [
      {
        labels: [
          ["build_date", "1970-01-01T00:00:00Z"],
          ["compiler", "gc"],
          ["git_commit", "0000000000000000000000000000000000000000"],
          ["git_tree_state", "clean"],
          ["git_version", sc.version],
          ["go_version", "go1.24.0"],
          ["major", "1"],
          ["minor", String(live.minor)],
          ["platform", "linux/amd64"],
        ],
        value: 1,
      },
    ],
  });
  return render(fams);
}

// -------------------------------------------------------------------------------------- /configz

// The client connection and logging kube-proxy's defaults give (pkg/proxy/apis/config/v1alpha1
// defaults.go: protobuf, QPS 5, burst 10; component-base logs: text, flushed every 5s, verbosity 0),
// with the kubeconfig kubeadm mounts. Logging has lower-case keys in both shapes: the internal type
// embeds component-base's versioned LoggingConfiguration.
const KUBECONFIG = "/var/lib/kube-proxy/kubeconfig.conf";
const LOGGING = {
  format: "text",
  flushFrequency: "5s",
  verbosity: 0,
  options: { text: { infoBufferSize: "0" }, json: { infoBufferSize: "0" } },
};

function configz(live: Live): string {
  const { sc, mode } = live;
  const c = sc.config ?? {};
  let nodePortAddresses = c.nodePortAddresses ?? null;
  // platformApplyDefaults: nftables mode with no nodePortAddresses means "primary".
  if (mode === "nftables" && (nodePortAddresses === null || nodePortAddresses.length === 0)) {
    nodePortAddresses = ["primary"];
  }
  const ipvs = c.ipvs ?? {};
  const clusterCIDRs = c.clusterCIDRs ?? ["10.244.0.0/16"];
  const metricsBind = c.metricsBindAddress ?? "127.0.0.1:10249";
  const healthzBind = c.healthzBindAddress ?? "0.0.0.0:10256";
  const featureGates = c.featureGates ?? null;

  if (live.minor < 36) {
    // newProxyServer rewrites ["primary"] into the node's CIDRs on the same *config configz holds.
    if (nodePortAddresses?.length === 1 && nodePortAddresses[0] === "primary") {
      nodePortAddresses = (sc.nodeIPs ?? ["10.0.0.5"]).map((ip) =>
        ip.includes(":") ? `${ip}/128` : `${ip}/32`,
      );
    }
    const internal = {
      Linux: {
        Conntrack: {
          MaxPerCore: 32768,
          Min: 131072,
          TCPEstablishedTimeout: "24h0m0s",
          TCPCloseWaitTimeout: "1h0m0s",
          TCPBeLiberal: c.conntrackTcpBeLiberal ?? false,
          UDPTimeout: "0s",
          UDPStreamTimeout: "0s",
        },
        MasqueradeAll: false,
        OOMScoreAdj: -999,
      },
      Windows: { RunAsService: false },
      FeatureGates: featureGates,
      ClientConnection: {
        Kubeconfig: KUBECONFIG,
        AcceptContentTypes: "",
        ContentType: "application/vnd.kubernetes.protobuf",
        QPS: 5,
        Burst: 10,
      },
      Logging: LOGGING,
      HostnameOverride: "",
      BindAddress: "0.0.0.0",
      HealthzBindAddress: healthzBind,
      MetricsBindAddress: metricsBind,
      BindAddressHardFail: false,
      EnableProfiling: false,
      ShowHiddenMetricsForVersion: "",
      Mode: mode,
      IPTables: { MasqueradeBit: 14, LocalhostNodePorts: true },
      IPVS: {
        Scheduler: ipvs.scheduler ?? "",
        ExcludeCIDRs: ipvs.excludeCIDRs ?? null,
        StrictARP: ipvs.strictARP ?? false,
        TCPTimeout: ipvs.tcpTimeout ?? "0s",
        TCPFinTimeout: ipvs.tcpFinTimeout ?? "0s",
        UDPTimeout: ipvs.udpTimeout ?? "0s",
      },
      Winkernel: {
        NetworkName: "",
        SourceVip: "",
        EnableDSR: false,
        RootHnsEndpointName: "",
        ForwardHealthCheckVip: false,
      },
      NFTables: { MasqueradeBit: 14 },
      DetectLocalMode: c.detectLocalMode ?? "ClusterCIDR",
      DetectLocal: { BridgeInterface: "", ClusterCIDRs: clusterCIDRs, InterfaceNamePrefix: "" },
      NodePortAddresses: nodePortAddresses,
      SyncPeriod: goDuration(30),
      MinSyncPeriod: goDuration(1),
      ConfigSyncPeriod: goDuration(900),
    };
    return JSON.stringify({ "kubeproxy.config.k8s.io": internal });
  }

  const versioned: Record<string, unknown> = {
    kind: "KubeProxyConfiguration",
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
  };
  if (featureGates && Object.keys(featureGates).length > 0) versioned.featureGates = featureGates; // omitempty
  Object.assign(versioned, {
    clientConnection: {
      kubeconfig: KUBECONFIG,
      acceptContentTypes: "",
      contentType: "application/vnd.kubernetes.protobuf",
      qps: 5,
      burst: 10,
    },
    logging: LOGGING,
    hostnameOverride: "",
    bindAddress: "0.0.0.0",
    healthzBindAddress: healthzBind,
    metricsBindAddress: metricsBind,
    bindAddressHardFail: false,
    enableProfiling: false,
    showHiddenMetricsForVersion: "",
    mode,
    iptables: {
      masqueradeBit: 14,
      masqueradeAll: false,
      localhostNodePorts: true,
      ...(live.minor >= 37 ? { snatNodeInternalIP: null } : {}),
      syncPeriod: "30s",
      minSyncPeriod: "1s",
    },
    ipvs: {
      syncPeriod: "30s",
      minSyncPeriod: "1s",
      scheduler: ipvs.scheduler ?? "",
      excludeCIDRs: ipvs.excludeCIDRs ?? null,
      strictARP: ipvs.strictARP ?? false,
      tcpTimeout: ipvs.tcpTimeout ?? "0s",
      tcpFinTimeout: ipvs.tcpFinTimeout ?? "0s",
      udpTimeout: ipvs.udpTimeout ?? "0s",
    },
    nftables: { masqueradeBit: 14, masqueradeAll: false, syncPeriod: "30s", minSyncPeriod: "1s" },
    winkernel: {
      networkName: "",
      sourceVip: "",
      enableDSR: false,
      rootHnsEndpointName: "",
      forwardHealthCheckVip: false,
    },
    detectLocalMode: c.detectLocalMode ?? "ClusterCIDR",
    detectLocal: { bridgeInterface: "", interfaceNamePrefix: "" },
    clusterCIDR: clusterCIDRs.join(","),
    nodePortAddresses,
    oomScoreAdj: -999,
    conntrack: {
      maxPerCore: 32768,
      min: 131072,
      tcpEstablishedTimeout: "24h0m0s",
      tcpCloseWaitTimeout: "1h0m0s",
      tcpBeLiberal: c.conntrackTcpBeLiberal ?? false,
      udpTimeout: "0s",
      udpStreamTimeout: "0s",
    },
    configSyncPeriod: "15m0s",
    portRange: "",
  });
  return JSON.stringify({ "kubeproxy.config.k8s.io": versioned });
}

// ------------------------------------------------------------------------------- /healthz, /livez

function health(live: Live, which: "healthz" | "livez", nowMs: number): { status: number; body: string } {
  const { sc } = live;
  const healthy = sc.healthy ?? true;
  const eligible = sc.nodeEligible ?? true;
  const ok = which === "healthz" ? healthy && eligible : healthy;
  const status = ok ? 200 : 503;
  const served = which === "healthz" ? live.healthzServed : live.livezServed;
  served.set(String(status), (served.get(String(status)) ?? 0) + 1);

  const now = nanosNow(nowMs);
  const syncSec = resolve(sc.lastSync === undefined ? { agoSeconds: 2 } : sc.lastSync, nowMs);
  const synced = syncSec === null ? null : BigInt(Math.round(syncSec * 1000)) * 1_000_000n;
  // A healthy answer reports "now" as lastUpdated, for compatibility with old releases.
  const lastUpdated = ok ? now : synced;

  if (live.minor >= 33) {
    const body: Record<string, unknown> = {
      lastUpdated: lastUpdated === null ? "0001-01-01T00:00:00Z" : rfc3339Nano(lastUpdated),
      currentTime: rfc3339Nano(now),
    };
    if (which === "healthz") body.nodeEligible = eligible;
    body.healthy = healthy;
    if (synced !== null) {
      body.status = Object.fromEntries(
        live.families.map((f) => [f, { lastUpdated: rfc3339Nano(synced), healthy }]),
      );
    }
    return { status, body: JSON.stringify(body) };
  }
  const lu = JSON.stringify(goTimeString(lastUpdated));
  const ct = JSON.stringify(goTimeString(now));
  const body =
    which === "healthz"
      ? `{"lastUpdated": ${lu},"currentTime": ${ct}, "nodeEligible": ${eligible}}`
      : `{"lastUpdated": ${lu},"currentTime": ${ct}}`;
  return { status, body };
}

// ------------------------------------------------------------------------------------- serving

const GARBAGE =
  "<html><head><title>502 Bad Gateway</title></head><body>upstream sent garbage</body></html>\n";

function answer(
  res: http.ServerResponse,
  fault: Fault | undefined,
  make: () => { status: number; type: string; body: string },
): void {
  // Held open until the caller gives up or the stand-in stops (stop closes every connection).
  if (fault?.hang) return;
  const go = () => {
    if (res.destroyed) return;
    if (fault?.status !== undefined) {
      res.writeHead(fault.status, { "Content-Type": "text/plain; charset=utf-8" });
      res.end(`${http.STATUS_CODES[fault.status] ?? "error"}\n`);
      return;
    }
    if (fault?.garbage) {
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end(GARBAGE);
      return;
    }
    if (fault?.huge !== undefined) {
      streamHuge(res, fault.huge);
      return;
    }
    const a = make();
    const headers: Record<string, string | number> = {
      "Content-Type": a.type,
      "X-Content-Type-Options": "nosniff",
    };
    // Go's net/http sets Content-Length itself when the whole answer fits its 2 KiB buffer.
    if (Buffer.byteLength(a.body) < 2048) headers["Content-Length"] = Buffer.byteLength(a.body);
    res.writeHead(a.status, headers);
    res.end(a.body);
  };
  if (fault?.slowMs) setTimeout(go, fault.slowMs).unref();
  else go();
}

function streamHuge(res: http.ServerResponse, bytes: number): void {
  res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
  const chunk = Buffer.alloc(
    64 * 1024,
    "# padding padding padding padding padding padding padding padding\n",
  );
  let left = bytes;
  const pump = () => {
    while (left > 0 && !res.destroyed) {
      const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
      left -= piece.length;
      if (!res.write(piece)) {
        res.once("drain", pump);
        return;
      }
    }
    res.end();
  };
  pump();
}

function metricsHandler(live: Live): http.RequestListener {
  return (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const f = live.sc.faults ?? {};
    const now = Date.now();
    if (path === "/proxyMode") {
      answer(res, f.proxyMode, () => ({ status: 200, type: "text/plain; charset=utf-8", body: live.mode }));
    } else if (path === "/configz") {
      answer(res, f.configz, () => ({ status: 200, type: "application/json", body: configz(live) }));
    } else if (path === "/metrics") {
      answer(res, f.metrics, () => ({
        status: 200,
        type: "text/plain; version=0.0.4; charset=utf-8",
        body: metricsText(live, now),
      }));
    } else if (path === "/healthz") {
      // apiserver's healthz.InstallHandler on the metrics mux: a plain "ok".
      answer(res, undefined, () => ({ status: 200, type: "text/plain; charset=utf-8", body: "ok" }));
    } else {
      res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" });
      res.end("404 page not found\n");
    }
  };
}

function healthHandler(live: Live): http.RequestListener {
  return (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const f = live.sc.faults ?? {};
    if (path === "/healthz" || path === "/livez") {
      const which = path === "/healthz" ? "healthz" : "livez";
      answer(res, f[which], () => ({ ...health(live, which, Date.now()), type: "application/json" }));
    } else {
      res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" });
      res.end("404 page not found\n");
    }
  };
}

function splitAddress(addr: string): { host: string; port: number } {
  const m = /^\[?([^\]]*)\]?:(\d+)$/.exec(addr);
  if (!m) throw new Error(`address ${JSON.stringify(addr)} is not host:port`);
  return { host: m[1]!, port: Number(m[2]) };
}

function listen(server: http.Server, addr: string, reusePort: boolean): Promise<number> {
  const { host, port } = splitAddress(addr);
  return new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen({ port, host, reusePort }, () => ok((server.address() as net.AddressInfo).port));
  });
}

/** A port that refuses: bound once to learn a free number, then released. */
function refusedPort(addr: string): Promise<number> {
  const { host } = splitAddress(addr);
  return new Promise((ok, fail) => {
    const s = net.createServer();
    s.once("error", fail);
    s.listen(0, host, () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => ok(port));
    });
  });
}

async function main(): Promise<void> {
  const file = process.argv[2];
  if (!file) throw new Error("usage: kube-proxy.js SCENARIO.json");
  const sc = JSON.parse(readFileSync(file, "utf8")) as Scenario;
  if (!["iptables", "ipvs", "nftables", ""].includes(sc.mode)) throw new Error(`unknown mode ${sc.mode}`);
  const live: Live = {
    sc,
    minor: minor(sc.version),
    mode: sc.mode === "" ? "iptables" : sc.mode,
    families: sc.dualStack ? ["IPv4", "IPv6"] : ["IPv4"],
    healthzServed: new Map(),
    livezServed: new Map(),
  };
  const f = sc.faults ?? {};
  const metricsAddr = sc.metricsAddress ?? "127.0.0.1:10249";
  const healthAddr = sc.healthAddress ?? "127.0.0.1:10256";
  const servers: http.Server[] = [];
  const start = async (addr: string, refuse: boolean, handler: http.RequestListener): Promise<number> => {
    if (refuse) return refusedPort(addr);
    const s = http.createServer(handler);
    // Like kube-proxy's Go server (no IdleTimeout, no ReadTimeout): an idle keep-alive connection is
    // never closed by the server. Node's 5 s default closed one just as the agent reused it, under load.
    s.keepAliveTimeout = 0;
    servers.push(s);
    return listen(s, addr, sc.reusePort === true);
  };
  const refuseMetrics = [f.proxyMode, f.configz, f.metrics].some((x) => x?.refuse);
  const refuseHealth = [f.healthz, f.livez].some((x) => x?.refuse);
  const mPort = await start(metricsAddr, refuseMetrics, metricsHandler(live));
  const hPort = await start(healthAddr, refuseHealth, healthHandler(live));
  for (const hc of sc.healthCheckNodePorts ?? []) {
    await start(`[::]:${hc.port}`, false, (_req, res) => {
      res.writeHead(hc.localEndpoints > 0 ? 200 : 503, {
        "Content-Type": "application/json",
        "X-Content-Type-Options": "nosniff",
        "X-Load-Balancing-Endpoint-Weight": String(hc.localEndpoints),
      });
      res.end(
        JSON.stringify({
          service: { namespace: hc.namespace, name: hc.name },
          localEndpoints: hc.localEndpoints,
          serviceProxyHealthy: true,
        }),
      );
    });
  }
  const stop = () => {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  let reloads = 0;
  process.on("SIGHUP", () => {
    live.sc = JSON.parse(readFileSync(file, "utf8")) as Scenario;
    process.stdout.write(`reloaded ${++reloads}\n`);
  });
  process.stdout.write(`ready ${mPort} ${hPort}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`kube-proxy stand-in: ${(e as Error).message}\n`);
  process.exit(2);
});
