import { createHash } from "node:crypto";
import { parseBoundedJson } from "../../common/bounded-json.js";
import { parseIpAddrJson } from "./ip-json.js";
import { LISTING_JSON_BOUNDS } from "./listing-bounds.js";
import { parsePrometheusText, type Exposition } from "./prometheus-text.js";
import { parsed, unparsable } from "./result.js";
import type { Result } from "../../common/result.js";

/** What lets a scan reuse the ipvs-mode deep reads, or why it may not (then it reads them all). */
export type GateKey = { known: true; key: string } | { known: false; why: string };

/** One cheap read the gate depends on, or why it could not be taken. */
export type GateInput<T> = { ok: true; value: T } | { ok: false; why: string };

const SVC_TOTAL = "kubeproxy_sync_proxy_rules_service_changes_total";
const EP_TOTAL = "kubeproxy_sync_proxy_rules_endpoint_changes_total";
const SVC_PENDING = "kubeproxy_sync_proxy_rules_service_changes_pending";
const EP_PENDING = "kubeproxy_sync_proxy_rules_endpoint_changes_pending";
const LAST = "kubeproxy_sync_proxy_rules_last_timestamp_seconds";
const QUEUED = "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds";

/**
 * kube-proxy's own word that its ipvs-mode state has not changed, from its /metrics
 * (kubernetes/kubernetes pkg/proxy/metrics/metrics.go, the same names at v1.31.14 and v1.34.4):
 * - service_changes_total / endpoint_changes_total count every Service and EndpointSlice change its
 *   change trackers saw (pkg/proxy/servicechangetracker.go, endpointschangetracker.go);
 * - last_queued_timestamp_seconds is set whenever a sync is queued (ipvs/proxier.go Sync(): Node
 *   changes and kube-proxy's start too), never by the periodic resync, so a restart moves it;
 * - last_timestamp_seconds is set at the end of each successful sync (ipvs/proxier.go syncProxyRules).
 * The key is the two totals and the queued times; it is known only when nothing is pending and the last
 * sync ended after the last queued one (every family; v1.33 on labels them ip_family), so a read taken
 * under it shows the state kube-proxy made from every change it had seen.
 */
export function kubeProxySyncState(text: string): GateKey {
  const p = parsePrometheusText(text);
  if (!p.ok) return { known: false, why: `kube-proxy's /metrics unparsable: ${p.error}` };
  const m = p.value;
  const svc = single(m, SVC_TOTAL);
  const ep = single(m, EP_TOTAL);
  const svcPending = single(m, SVC_PENDING);
  const epPending = single(m, EP_PENDING);
  for (const [name, v] of [
    [SVC_TOTAL, svc],
    [EP_TOTAL, ep],
    [SVC_PENDING, svcPending],
    [EP_PENDING, epPending],
  ] as const)
    if (v === null) return { known: false, why: `kube-proxy does not export ${name} as one number` };
  if (svcPending! > 0) return { known: false, why: `kube-proxy has ${svcPending} Service changes pending` };
  if (epPending! > 0) return { known: false, why: `kube-proxy has ${epPending} endpoint changes pending` };
  const queued = byFamily(m, QUEUED);
  const last = byFamily(m, LAST);
  if (queued === null || queued.size === 0)
    return { known: false, why: `kube-proxy does not export ${QUEUED}` };
  if (last === null) return { known: false, why: `kube-proxy does not export ${LAST}` };
  const parts: string[] = [];
  for (const [family, q] of [...queued].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const l = last.get(family);
    if (l === undefined || !(l >= q))
      return {
        known: false,
        why: `kube-proxy (${family || "all families"}) has not synced since it last queued a sync`,
      };
    parts.push(family === "" ? String(q) : `${family} ${q}`);
  }
  return { known: true, key: `svc ${svc} ep ${ep} queued ${parts.join(" ")}` };
}

function single(m: Exposition, name: string): number | null {
  const s = m.get(name)?.samples ?? [];
  if (s.length !== 1 || !Number.isFinite(s[0]!.value)) return null;
  return s[0]!.value;
}

/** A gauge's value per ip_family ("" when unlabeled, before v1.33); null when a value is not a number. */
function byFamily(m: Exposition, name: string): Map<string, number> | null {
  const out = new Map<string, number>();
  for (const s of m.get(name)?.samples ?? []) {
    if (!Number.isFinite(s.value)) return null;
    out.set(s.labels["ip_family"] ?? "", s.value);
  }
  return out;
}

/**
 * `ip -j addr show up` reduced to what a change of the node's own addresses changes: each up link's
 * name, index and addresses. kube-proxy's kube-ipvs0 is a dummy link it never sets up, so its
 * thousands of Service addresses are not in this listing (they move with kube-proxy's counters);
 * the lifetimes of dynamic addresses count down by themselves and are left out.
 */
export function upLinksFingerprint(text: string): Result<string> {
  // iproute2 (6.1 at least) prints `{}` for each link the `up` filter leaves out.
  const read =
    text.trim() === "" ? { ok: true as const, doc: [] } : parseBoundedJson(text, LISTING_JSON_BOUNDS);
  if (!read.ok) return unparsable(`ip -j addr show up is not JSON: ${read.message}`);
  if (!Array.isArray(read.doc)) return unparsable("ip -j addr show up is not a list");
  const links = read.doc.filter((l) => !(typeof l === "object" && l !== null && Object.keys(l).length === 0));
  const p = parseIpAddrJson(JSON.stringify(links));
  if (!p.ok) return unparsable(p.error);
  const lines = p.value.map(
    (l) =>
      `${l.name} ${l.operState} ${l.addresses
        .map((a) => `${a.address}/${a.prefixLen}`)
        .sort()
        .join(",")}`,
  );
  return parsed(digest(lines.sort().join("\n")));
}

const digest = (s: string) => createHash("sha256").update(s).digest("hex").slice(0, 16);

/**
 * The gate of the ipvs-mode deep reads (/proc/net/ip_vs, every link's addresses with kube-ipvs0's,
 * ipsets' members): kube-proxy said ipvs mode and has synced every change it saw (kubeProxySyncState),
 * and the cheap fingerprints of what others may change too did not move: every ipset's header
 * (`ipset list -terse`: name, type, entries, size; null when ip_set is not in the kernel) and the up
 * links' addresses. Any part unread is doubt: the key is unknown and the scan reads everything.
 */
export function ipvsGateKey(i: {
  proxyMode: GateInput<string>;
  metrics: GateInput<string>;
  ipsets: GateInput<string | null>;
  links: GateInput<string>;
}): GateKey {
  if (!i.proxyMode.ok) return { known: false, why: `kube-proxy's /proxyMode not read: ${i.proxyMode.why}` };
  if (i.proxyMode.value !== "ipvs")
    return { known: false, why: `kube-proxy runs ${i.proxyMode.value} mode, not ipvs` };
  if (!i.metrics.ok) return { known: false, why: `kube-proxy's /metrics not read: ${i.metrics.why}` };
  const sync = kubeProxySyncState(i.metrics.value);
  if (!sync.known) return sync;
  if (!i.ipsets.ok) return { known: false, why: `ipsets not read: ${i.ipsets.why}` };
  if (!i.links.ok) return { known: false, why: `links not read: ${i.links.why}` };
  const links = upLinksFingerprint(i.links.value);
  if (!links.ok) return { known: false, why: `links not read: ${links.error}` };
  const ipsets = i.ipsets.value === null ? "none" : digest(i.ipsets.value);
  return { known: true, key: `${sync.key}; ipsets ${ipsets}; links ${links.value}` };
}
