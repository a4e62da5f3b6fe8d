import type { KubeProxyMetricsFacts } from "../facts/kube-proxy.js";
import type { ConnectOutcome } from "../io/tcp-connect.js";
import type { NodeReport } from "../report/schema.js";
import type { NodeView } from "../view/build.js";
import { counterValue, LAST_SYNC, readCounter } from "../view/counters.js";
import { kubeIpvs0ServiceIps } from "../view/kube-ipvs0.js";
import { DEFAULT_RULE_OPTIONS } from "../view/options.js";
import { viewOfReport } from "../view/summary.js";
import type { VerifyCheck } from "../../common/verify-result.js";

/** A later read of kube-proxy's /metrics, `at` seconds since the epoch. */
export interface MetricsReading {
  facts: KubeProxyMetricsFacts | null;
  error: string | null;
  at: number;
}

export type ConnectInput =
  { kind: "done"; address: string; outcome: ConnectOutcome } | { kind: "no-address" } | { kind: "skipped" };

export interface VerifyInput {
  report: NodeReport;
  /** The second read, `syncWindowS` after the scan; null when the window is 0. */
  second: MetricsReading | null;
  syncWindowS: number;
  connect: ConnectInput;
  staleAfterS?: number;
}

type Status = VerifyCheck["status"];
const check = (id: VerifyCheck["id"], name: string, status: Status, detail: string | null): VerifyCheck => ({
  id,
  name,
  status,
  detail,
});

const FAILURES_BY_MODE: Record<string, string> = {
  nftables: "kubeproxy_sync_proxy_rules_nftables_sync_failures_total",
  iptables: "kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
  ipvs: "kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
};

function some(items: readonly string[], n = 4): string {
  return items.length <= n
    ? items.join(", ")
    : `${items.slice(0, n).join(", ")}, … and ${items.length - n} more`;
}

function notRead(r: NodeReport, probe: string): string {
  const p = r.probes.find((x) => x.name === probe);
  return p === undefined ? `no ${probe} probe ran` : `${probe} not read: ${p.error?.message ?? "failed"}`;
}

function proxyMode(r: NodeReport, v: NodeView): VerifyCheck {
  const name = "proxy mode (/proxyMode)";
  const mode = v.answeredMode;
  if (mode === null) return check("proxy-mode", name, "fail", notRead(r, "kube-proxy-mode"));
  return mode === "nftables"
    ? check("proxy-mode", name, "ok", null)
    : check("proxy-mode", name, "fail", `kube-proxy answers ${JSON.stringify(mode)}`);
}

function ipvs(r: NodeReport, v: NodeView): VerifyCheck {
  const name = "ipvs virtual servers remaining";
  const f = r.facts;
  if (f.ipvs === null) return check("ipvs-virtual-servers", name, "fail", notRead(r, "ipvs"));
  const n = f.ipvs.virtualServerCount;
  if (n === 0) return check("ipvs-virtual-servers", name, "ok", null);
  const c = v.virtualServers;
  const vs = (v: (typeof c.foreign)[number]) =>
    `${v.protocol} ${v.address ?? `fwmark ${v.fwmark}`}:${v.port ?? ""}`;
  const mine = [...c.services, ...c.nodePorts];
  const unclassified = n - mine.length - c.foreign.length;
  if (mine.length > 0 || unclassified > 0 || f.kubeIpvs0 === null || f.addresses === null)
    return check(
      "ipvs-virtual-servers",
      name,
      "fail",
      mine.length > 0 ? `${n} left, ${mine.length} of them kube-proxy's: ${some(mine.map(vs))}` : `${n} left`,
    );
  // Not kube-proxy's (keepalived, kube-vip): cleanup never removes them, so they cannot fail the node.
  return check(
    "ipvs-virtual-servers",
    name,
    "ok",
    `${c.foreign.length} foreign virtual servers kept (${some(c.foreign.map(vs))}); kube-proxy in nftables mode flushes them when it restarts`,
  );
}

function kubeIpvs0(r: NodeReport): VerifyCheck {
  const k = r.facts.kubeIpvs0;
  if (k === null) return check("kube-ipvs0", "kube-ipvs0", "fail", notRead(r, "kube-ipvs0"));
  if (!k.present) return check("kube-ipvs0", "kube-ipvs0", "ok", "absent");
  const a = kubeIpvs0ServiceIps(k);
  return check(
    "kube-ipvs0",
    "kube-ipvs0",
    "fail",
    a.length > 0 ? `present with ${a.length} addresses, a black hole for ${some(a)}` : "present",
  );
}

function ipsets(r: NodeReport, v: NodeView): VerifyCheck {
  const name = "kube-proxy ipsets remaining";
  if (v.kubeProxyIpsets === null) return check("kube-proxy-ipsets", name, "fail", notRead(r, "ipsets"));
  const left = v.kubeProxyIpsets.map((s) => s.name);
  return left.length === 0
    ? check("kube-proxy-ipsets", name, "ok", null)
    : check("kube-proxy-ipsets", name, "fail", `${left.length} left: ${some(left)}`);
}

function chains(r: NodeReport, v: NodeView): VerifyCheck {
  const name = "kube-proxy iptables chains remaining";
  if (r.facts.iptables === null || v.kubeProxyChains === null)
    return check("kube-proxy-iptables-chains", name, "fail", notRead(r, "iptables"));
  const left: string[] = [];
  const unread: string[] = [];
  // The view lists kube-proxy's chains per backend, in the facts' order; per-Service ones by family.
  r.facts.iptables.backends.forEach((b, i) => {
    const mine = v.kubeProxyChains?.[i];
    if (!b.read || mine === undefined || !mine.read) {
      unread.push(`${b.backend} ${b.family}${b.read ? "" : ` (${b.why.kind}: ${b.why.message})`}`);
      return;
    }
    for (const c of mine.chains) left.push(`${b.backend} ${b.family} ${c.table}/${c.name}`);
    for (const [p, n] of Object.entries(b.patternCounts))
      if (n > 0) left.push(`${b.backend} ${b.family} ${n}× ${p}`);
  });
  if (left.length > 0)
    return check("kube-proxy-iptables-chains", name, "fail", `${left.length} left: ${some(left)}`);
  // A backend not read may hold any of kube-proxy's chains (KUBE-IPVS-FILTER still rejecting): not ok.
  if (unread.length > 0)
    return check("kube-proxy-iptables-chains", name, "fail", `not read: ${some(unread)}`);
  // kubelet's KUBE-FIREWALL, KUBE-KUBELET-CANARY and KUBE-IPTABLES-HINT are not leftovers.
  return check("kube-proxy-iptables-chains", name, "ok", null);
}

function nftTable(r: NodeReport): VerifyCheck {
  const name = "kube-proxy nftables table";
  const n = r.facts.nftables;
  if (n === null) return check("nftables-table", name, "fail", notRead(r, "nftables"));
  if (n.kubeProxy.length === 0)
    return check("nftables-table", name, "fail", `no table ip/ip6 ${n.kubeProxyTableName}`);
  return check("nftables-table", name, "ok", n.kubeProxy.map((t) => `${t.family} ${t.name}`).join(", "));
}

function syncFailures(
  r: NodeReport,
  v: NodeView,
  second: MetricsReading | null,
  windowS: number,
): VerifyCheck {
  const mode = v.answeredMode;
  const metric = mode === null ? undefined : FAILURES_BY_MODE[mode];
  const name = `${mode === "nftables" || mode === null ? "nftables" : "iptables"} sync failures not rising`;
  if (metric === undefined)
    return check("sync-failures", name, "fail", `no failure counter for mode ${JSON.stringify(mode)}`);
  const first = counterValue(readCounter(r.facts, mode, metric));
  if (first === null) return check("sync-failures", name, "fail", notRead(r, "kube-proxy-metrics"));
  if (windowS === 0 || second === null) {
    return first === 0
      ? check("sync-failures", name, "ok", "0 (single read)")
      : check("sync-failures", name, "fail", `${first} failures (single read, --sync-window-s 0 wants 0)`);
  }
  if (second.facts === null)
    return check(
      "sync-failures",
      name,
      "not-run",
      `second /metrics read failed: ${second.error ?? "no answer"}`,
    );
  const later = counterValue(readCounter({ ...r.facts, kubeProxyMetrics: second.facts }, mode, metric)) ?? 0;
  const span = Math.round((second.at - Date.parse(r.scannedAt) / 1000) * 10) / 10;
  if (later > first)
    return check("sync-failures", name, "fail", `rose from ${first} to ${later} in ${span} s`);
  if (later < first)
    return check(
      "sync-failures",
      name,
      "fail",
      `fell from ${first} to ${later}: kube-proxy restarted during the window; run again`,
    );
  return check("sync-failures", name, "ok", `${later} over ${span} s`);
}

function lastSync(r: NodeReport, second: MetricsReading | null, staleAfterS: number): VerifyCheck {
  const name = "last successful sync fresh";
  const facts = second?.facts ?? r.facts.kubeProxyMetrics;
  const at = second?.facts ? second.at : Date.parse(r.scannedAt) / 1000;
  if (facts === null) return check("last-sync", name, "fail", notRead(r, "kube-proxy-metrics"));
  const s = facts.metrics[LAST_SYNC];
  if (s === undefined || s.series === 0)
    return check("last-sync", name, "fail", `${LAST_SYNC} not exported: no successful sync yet`);
  // One series per IP family on dual-stack nodes (v1.33+): the oldest family decides.
  const age = Math.round(at - s.min);
  return age < staleAfterS
    ? check("last-sync", name, "ok", `${age} s ago`)
    : check("last-sync", name, "fail", `${age} s ago (limit ${staleAfterS} s)`);
}

function connect(c: ConnectInput): VerifyCheck {
  const name = "Service connect (from the host network)";
  switch (c.kind) {
    case "skipped":
      return check("service-connect", name, "skipped", "--skip-connect");
    case "no-address":
      return check(
        "service-connect",
        name,
        "not-run",
        "no Service address: give --service-address HOST:PORT, or run in a pod (KUBERNETES_SERVICE_HOST/PORT)",
      );
    case "done":
      return c.outcome.ok
        ? check("service-connect", name, "ok", `${c.address} in ${Math.round(c.outcome.durationMs)} ms`)
        : check("service-connect", name, "fail", `${c.address}: ${c.outcome.error}`);
  }
}

const ago = (s: number) => (s < 3600 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`);

// Issue #17: every Service IPVS served is served by nftables. A snapshot that cannot be compared is
// said so by name, never passed as "nothing lost".
function parity(r: NodeReport): VerifyCheck {
  const name = "every Service served before the switch is served now";
  const p = r.facts.parity;
  if (p === null) return check("service-parity", name, "fail", notRead(r, "parity"));
  switch (p.state) {
    case "off":
      return check("service-parity", name, "skipped", "not asked (no --parity-snapshot)");
    case "no-snapshot":
      return check(
        "service-parity",
        name,
        "skipped",
        `no snapshot at ${p.path}: none was taken in ipvs mode`,
      );
    case "stale":
      return check(
        "service-parity",
        name,
        "skipped",
        `snapshot stale: taken ${ago(p.ageSeconds)} ago, over the ${ago(p.maxAgeSeconds)} limit: not compared`,
      );
    case "corrupt":
      return check("service-parity", name, "not-run", `snapshot ${p.path} unreadable: ${p.why}`);
    case "not-applicable":
    case "recorded":
    case "not-recorded":
      return check("service-parity", name, "not-run", "kube-proxy does not answer nftables");
    case "compared": {
      const c = p.counts;
      const detail = `${c.same} same, ${c.missingAfter} missing after, ${c.endpointsDiffer} with other endpoints, ${c.newAfter} new (snapshot ${ago(p.ageSeconds)} old)`;
      return check("service-parity", name, c.missingAfter === 0 ? "ok" : "fail", detail);
    }
  }
}

// A node is accepted only on a full reading: a part not read may hold what every other check looks for.
function scanComplete(r: NodeReport): VerifyCheck {
  const name = "every part of the node read";
  const failed = r.probes.filter((p) => !p.ok);
  if (failed.length === 0) return check("scan-complete", name, "ok", null);
  const why = failed.map((p) => `${p.name} (${p.error?.kind ?? "failed"}: ${p.error?.message ?? ""})`);
  return check("scan-complete", name, "fail", `not read: ${some(why, 3)}`);
}

/** The node-level acceptance check after a switch, in the guide's order. Pure. */
export function verifyChecks(v: VerifyInput): VerifyCheck[] {
  const r = v.report;
  const view = viewOfReport(r);
  return [
    proxyMode(r, view),
    ipvs(r, view),
    kubeIpvs0(r),
    ipsets(r, view),
    chains(r, view),
    nftTable(r),
    syncFailures(r, view, v.second, v.syncWindowS),
    lastSync(r, v.second, v.staleAfterS ?? DEFAULT_RULE_OPTIONS.staleAfterS),
    parity(r),
    connect(v.connect),
    scanComplete(r),
  ];
}
