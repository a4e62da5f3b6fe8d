import type { KubeProxyMetricsFacts } from "../facts/kube-proxy.js";
import type { ConnectOutcome } from "../io/tcp-connect.js";
import { formatHostPort } from "../parse/service-address.js";
import type { IpvsPlane, NodePortReach, NodeReport } from "../report/schema.js";
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

export type NodePortConnectInput =
  | { kind: "not-asked" }
  | { kind: "no-target" }
  | { kind: "done"; port: number; results: { address: string; outcome: ConnectOutcome }[] };

export interface VerifyInput {
  report: NodeReport;
  /** The second read, `syncWindowS` after the scan; null when the window is 0. */
  second: MetricsReading | null;
  syncWindowS: number;
  connect: ConnectInput;
  /** Absent: not asked (the connect sends traffic). */
  nodePortConnect?: NodePortConnectInput;
  /** nftables (after the switch, the default) or ipvs (after a rollback). */
  expectMode?: "nftables" | "ipvs";
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

function proxyMode(r: NodeReport, v: NodeView, expected: string): VerifyCheck {
  const name = "proxy mode (/proxyMode)";
  const mode = v.answeredMode;
  if (mode === null) return check("proxy-mode", name, "fail", notRead(r, "kube-proxy-mode"));
  return mode === expected
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
  const unclassified = n - mine.length - c.foreign.length - c.otherProxy.length;
  if (mine.length > 0 || unclassified > 0 || f.kubeIpvs0 === null || f.addresses === null)
    return check(
      "ipvs-virtual-servers",
      name,
      "fail",
      mine.length > 0 ? `${n} left, ${mine.length} of them kube-proxy's: ${some(mine.map(vs))}` : `${n} left`,
    );
  // Not kube-proxy's (keepalived, kube-vip, kube-router's Services): cleanup never removes them, so they
  // cannot fail the node.
  const kept = [
    ...(c.foreign.length > 0
      ? [`${c.foreign.length} foreign virtual servers kept (${some(c.foreign.map(vs))})`]
      : []),
    ...(c.otherProxy.length > 0
      ? [`${c.otherProxy.length} of kube-router's service proxy kept (${some(c.otherProxy.map(vs))})`]
      : []),
  ];
  return check(
    "ipvs-virtual-servers",
    name,
    "ok",
    `${kept.join("; ")}; kube-proxy in nftables mode flushes them when it restarts`,
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

// Parity: every Service IPVS served is served by nftables. A snapshot that cannot be compared is
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
      const detail = `${c.same} same, ${c.missingAfter} missing after, ${c.endpointsDiffer} with other endpoints, ${c.newAfter} new${c.arpOnly ? `, ${c.arpOnly} reachable only by ARP from kube-ipvs0 before (no one answers ARP now)` : ""}${p.arpNotRead !== undefined ? `, ARP-only addresses not known (${p.arpNotRead})` : ""} (snapshot ${ago(p.ageSeconds)} old)`;
      return check("service-parity", name, c.missingAfter === 0 ? "ok" : "fail", detail);
    }
  }
}

/** The NodePort reach carried in the report (built before lists were cut); rebuilt for an older agent's. */
export function nodePortReachOf(r: NodeReport, view?: NodeView): NodePortReach {
  return r.view?.nodePortReach ?? (view ?? viewOfReport(r)).nodePortReach;
}

function ipvsPlaneOf(r: NodeReport, view: NodeView): IpvsPlane | null {
  if (r.view?.ipvsPlane !== undefined) return r.view.ipvsPlane;
  // An older agent's report: its IPVS table may be cut, and a cut table cannot say what is missing.
  return r.truncated["facts.ipvs.virtualServers"] === undefined ? view.ipvsPlane : null;
}

const at = (a: { address: string; interface: string }) => `${a.address} (${a.interface})`;

const REACH_FIX: Record<string, string> = {
  nftables:
    'nftables mode accepts NodePorts only on nodePortAddresses (default primary): if NodePort clients use these addresses, list them there (["0.0.0.0/0"] restores ipvs mode\'s reach)',
  ipvs: "ipvs mode puts a NodePort virtual server on every address its nodePortAddresses matches: check that setting and kube-proxy's sync",
};

// The silent regression of the move (guide: a client on a secondary interface stops
// reaching a NodePort while kube-proxy stays healthy). Read from kube-proxy's own rules, per address.
function nodePortAddresses(reach: NodePortReach): VerifyCheck {
  const id = "nodeport-addresses";
  const name = "NodePorts served on the node's addresses";
  if (!reach.read) return check(id, name, "not-run", reach.why);
  const skipped =
    reach.skipped.length === 0
      ? ""
      : `; skipped: ${some(reach.skipped.map((s) => s.seen))} (no NodePort client uses them)`;
  if (reach.nodePorts === 0)
    return check(id, name, "ok", `no NodePorts programmed: nothing to serve${skipped}`);
  if (reach.addresses.length === 0)
    return check(id, name, "not-run", `no node address a NodePort client may use was found${skipped}`);
  const served = reach.addresses.filter((a) => a.served === true);
  const servedPart = `served: ${served.length === 0 ? "none" : some(served.map(at))}`;
  const unread = reach.addresses.filter((a) => a.served === null);
  if (unread.length > 0)
    return check(
      id,
      name,
      "not-run",
      `not read for ${some(
        unread.map((a) => `${at(a)}: ${a.why}`),
        3,
      )}; ${servedPart}${skipped}`,
    );
  const not = reach.addresses.filter((a) => a.served === false);
  if (not.length > 0)
    return check(
      id,
      name,
      "fail",
      `not served: ${some(
        not.map((a) => `${at(a)}: ${a.why}`),
        3,
      )}; ${servedPart}${skipped}; ${REACH_FIX[reach.mode]}`,
    );
  return check(id, name, "ok", `${servedPart} (${reach.nodePorts} NodePorts, ${reach.mode} mode)${skipped}`);
}

function nodePortConnect(c: NodePortConnectInput, reach: NodePortReach): VerifyCheck {
  const id = "nodeport-connect";
  const name = "NodePort connect on each node address";
  if (c.kind === "not-asked")
    return check(
      id,
      name,
      "skipped",
      "not asked: --nodeport-connect opens one TCP connection to a NodePort on each address",
    );
  if (c.kind === "no-target") {
    if (!reach.read) return check(id, name, "not-run", reach.why);
    if (reach.nodePorts === 0)
      return check(id, name, "skipped", "no NodePorts programmed: nothing to connect to");
    return check(id, name, "not-run", "no TCP NodePort with endpoints to connect to");
  }
  if (c.results.length === 0)
    return check(id, name, "not-run", "no node address a NodePort client may use was found");
  const said = c.results.map(({ address, outcome: o }) => {
    const hp = formatHostPort({ host: address, port: c.port });
    return o.ok ? `${hp} in ${Math.round(o.durationMs)} ms` : `${hp}: ${o.error}`;
  });
  const failed = c.results.filter((x) => !x.outcome.ok).length;
  return check(id, name, failed > 0 ? "fail" : "ok", some(said, 6));
}

// A rollback (--expect-mode ipvs): the guide's "confirm the old data plane is actually back, rather than
// assuming" (ipvsadm -L -n non-empty, kube-ipvs0 returns), each a line of its own.
function ipvsPresent(r: NodeReport, plane: IpvsPlane | null): VerifyCheck {
  const id = "ipvs-virtual-servers-present";
  const name = "ipvs virtual servers present";
  const f = r.facts.ipvs;
  if (f === null) return check(id, name, "not-run", notRead(r, "ipvs"));
  if (!f.available || f.virtualServerCount === 0)
    return check(
      id,
      name,
      "fail",
      "no IPVS virtual servers: kube-proxy has not built ipvs mode's data plane",
    );
  if (plane === null)
    return check(
      id,
      name,
      "not-run",
      `${f.virtualServerCount} virtual servers; which have real servers is not known: ${notRead(r, r.facts.kubeIpvs0 === null ? "kube-ipvs0" : "addresses")}`,
    );
  const detail = `${plane.virtualServers} virtual servers, ${plane.withRealServers} with real servers (${plane.realServers} real servers)`;
  return check(id, name, plane.withRealServers === 0 ? "fail" : "ok", detail);
}

function kubeIpvs0ServiceIPs(r: NodeReport, plane: IpvsPlane | null): VerifyCheck {
  const id = "kube-ipvs0-service-ips";
  const name = "kube-ipvs0 holds the Service IPs IPVS serves";
  const k = r.facts.kubeIpvs0;
  if (k === null) return check(id, name, "not-run", notRead(r, "kube-ipvs0"));
  if (!k.present)
    return check(id, name, "fail", "kube-ipvs0 absent: no Service IP is local, so IPVS serves none of them");
  if (plane === null)
    return check(id, name, "not-run", notRead(r, r.facts.ipvs === null ? "ipvs" : "addresses"));
  if (plane.serviceIPs === 0)
    return check(
      id,
      name,
      "fail",
      `IPVS serves no Service IP (every cluster has the kubernetes Service's ClusterIP); kube-ipvs0 holds ${k.addresses.length}`,
    );
  const counted = `${plane.onKubeIpvs0} of ${plane.serviceIPs} Service IPs IPVS serves are on kube-ipvs0`;
  const gone = plane.serviceIPs - plane.onKubeIpvs0;
  if (gone === 0) return check(id, name, "ok", counted);
  const more = gone > plane.missing.length ? `, … and ${gone - plane.missing.length} more` : "";
  return check(id, name, "fail", `${counted}; missing: ${plane.missing.join(", ")}${more}`);
}

function nftablesLeft(r: NodeReport): VerifyCheck {
  const id = "nftables-table-left";
  const name = "kube-proxy nftables tables gone";
  const n = r.facts.nftables;
  if (n === null) return check(id, name, "not-run", notRead(r, "nftables"));
  if (n.kubeProxy.length === 0) return check(id, name, "ok", null);
  const left = n.kubeProxy.map((t) => `${t.family} ${t.name}`).join(", ");
  return check(
    id,
    name,
    "fail",
    `left: ${left}: kube-proxy in ipvs mode removes them when it starts; once the ipvs lines pass, nft delete table ${n.kubeProxy.map((t) => `${t.family} ${t.name}`).join("; nft delete table ")}`,
  );
}

// A node is accepted only on a full reading: a part not read may hold what every other check looks for.
function scanComplete(r: NodeReport): VerifyCheck {
  const name = "every part of the node read";
  const failed = r.probes.filter((p) => !p.ok);
  if (failed.length === 0) return check("scan-complete", name, "ok", null);
  const why = failed.map((p) => `${p.name} (${p.error?.kind ?? "failed"}: ${p.error?.message ?? ""})`);
  return check("scan-complete", name, "fail", `not read: ${some(why, 3)}`);
}

/** The node-level acceptance check after a switch (or a rollback), in the guide's order. Pure. */
export function verifyChecks(v: VerifyInput): VerifyCheck[] {
  const r = v.report;
  const view = viewOfReport(r);
  const expected = v.expectMode ?? "nftables";
  const reach = nodePortReachOf(r, view);
  const live = [
    syncFailures(r, view, v.second, v.syncWindowS),
    lastSync(r, v.second, v.staleAfterS ?? DEFAULT_RULE_OPTIONS.staleAfterS),
  ];
  const nodePorts = [
    nodePortAddresses(reach),
    nodePortConnect(v.nodePortConnect ?? { kind: "not-asked" }, reach),
  ];
  if (expected === "ipvs") {
    const plane = ipvsPlaneOf(r, view);
    return [
      proxyMode(r, view, "ipvs"),
      ipvsPresent(r, plane),
      kubeIpvs0ServiceIPs(r, plane),
      nftablesLeft(r),
      ...live,
      connect(v.connect),
      ...nodePorts,
      scanComplete(r),
    ];
  }
  return [
    proxyMode(r, view, "nftables"),
    ipvs(r, view),
    kubeIpvs0(r),
    ipsets(r, view),
    chains(r, view),
    nftTable(r),
    ...live,
    parity(r),
    connect(v.connect),
    ...nodePorts,
    scanComplete(r),
  ];
}
