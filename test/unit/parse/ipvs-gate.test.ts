import t from "tap";
import { ipvsGateKey, kubeProxySyncState, upLinksFingerprint } from "../../../agent/parse/ipvs-gate.js";

// The decision "may a scan reuse the ipvs-mode deep reads?" on kube-proxy's own /metrics text, in the
// format pkg/proxy/metrics/metrics.go writes it (v1.31: unlabeled; v1.33 on: ip_family labels).

const v131 = (o: { svc?: number; ep?: number; svcPending?: number; last?: number; queued?: number } = {}) =>
  [
    "# TYPE kubeproxy_sync_proxy_rules_service_changes_total counter",
    `kubeproxy_sync_proxy_rules_service_changes_total ${o.svc ?? 21}`,
    "# TYPE kubeproxy_sync_proxy_rules_endpoint_changes_total counter",
    `kubeproxy_sync_proxy_rules_endpoint_changes_total ${o.ep ?? 57}`,
    "# TYPE kubeproxy_sync_proxy_rules_service_changes_pending gauge",
    `kubeproxy_sync_proxy_rules_service_changes_pending ${o.svcPending ?? 0}`,
    "# TYPE kubeproxy_sync_proxy_rules_endpoint_changes_pending gauge",
    "kubeproxy_sync_proxy_rules_endpoint_changes_pending 0",
    "# TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds gauge",
    `kubeproxy_sync_proxy_rules_last_timestamp_seconds ${o.last ?? 1700000100.5}`,
    "# TYPE kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds gauge",
    `kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds ${o.queued ?? 1700000090.25}`,
    "",
  ].join("\n");

const v134 = (queued6: number) =>
  [
    "# TYPE kubeproxy_sync_proxy_rules_service_changes_total counter",
    "kubeproxy_sync_proxy_rules_service_changes_total 21",
    "# TYPE kubeproxy_sync_proxy_rules_endpoint_changes_total counter",
    "kubeproxy_sync_proxy_rules_endpoint_changes_total 57",
    "# TYPE kubeproxy_sync_proxy_rules_service_changes_pending gauge",
    "kubeproxy_sync_proxy_rules_service_changes_pending 0",
    "# TYPE kubeproxy_sync_proxy_rules_endpoint_changes_pending gauge",
    "kubeproxy_sync_proxy_rules_endpoint_changes_pending 0",
    "# TYPE kubeproxy_sync_proxy_rules_last_timestamp_seconds gauge",
    'kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} 1700000100',
    'kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv6"} 1700000100',
    "# TYPE kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds gauge",
    'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"} 1700000090',
    `kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv6"} ${queued6}`,
    "",
  ].join("\n");

t.test("kube-proxy's sync state: known only when every change it saw is synced", async (t) => {
  const a = kubeProxySyncState(v131());
  t.match(a, { known: true, key: /svc 21 ep 57 queued 1700000090\.25/ });
  t.not(
    (kubeProxySyncState(v131({ ep: 58 })) as { key: string }).key,
    (a as { key: string }).key,
    "an EndpointSlice change moves the key",
  );
  t.not(
    (kubeProxySyncState(v131({ queued: 1700000095, last: 1700000101 })) as { key: string }).key,
    (a as { key: string }).key,
    "a new queued sync (a Node change, a restart) moves the key",
  );
  t.same(
    kubeProxySyncState(v131({ last: 1700000200 })),
    a,
    "a periodic resync alone (last sync moves, nothing queued) keeps it",
  );
  t.match(kubeProxySyncState(v131({ svcPending: 2 })), { known: false, why: /2 Service changes pending/ });
  t.match(kubeProxySyncState(v131({ last: 1700000080, queued: 1700000090 })), {
    known: false,
    why: /not synced since it last queued a sync/,
  });
  t.match(kubeProxySyncState(v134(1700000090)), { known: true, key: /IPv4 1700000090.*IPv6 1700000090/ });
  t.match(
    kubeProxySyncState(v134(1700000200)),
    { known: false, why: /IPv6.*not synced/ },
    "one family behind is enough to doubt",
  );
});

t.test("a metric kube-proxy does not export, or garbage, is doubt, never unchanged", async (t) => {
  t.match(kubeProxySyncState(v131().replace(/^kubeproxy_sync_proxy_rules_endpoint_changes_total .*$/m, "")), {
    known: false,
    why: /kubeproxy_sync_proxy_rules_endpoint_changes_total/,
  });
  t.match(kubeProxySyncState("not { metrics"), { known: false, why: /unparsable/ });
  t.match(kubeProxySyncState(v131({ svc: NaN })), { known: false, why: /service_changes_total/ });
});

const addrs = (extra: object[] = [], life = 3600) =>
  JSON.stringify([
    {
      ifindex: 1,
      ifname: "lo",
      flags: ["LOOPBACK", "UP"],
      operstate: "UNKNOWN",
      addr_info: [{ family: "inet", local: "127.0.0.1", prefixlen: 8, valid_life_time: 4294967295 }],
    },
    {
      ifindex: 2,
      ifname: "eth0",
      flags: ["BROADCAST", "UP"],
      operstate: "UP",
      addr_info: [{ family: "inet6", local: "2001:db8::5", prefixlen: 64, valid_life_time: life }],
    },
    ...extra,
  ]);

t.test("the up links' addresses, without the lifetimes that tick by themselves", async (t) => {
  const a = upLinksFingerprint(addrs());
  t.ok(a.ok);
  t.same(upLinksFingerprint(addrs([], 1200)), a, "a lifetime counting down is no change");
  t.not(
    JSON.stringify(upLinksFingerprint(addrs([{ ifindex: 9, ifname: "eth1", flags: ["UP"], addr_info: [] }]))),
    JSON.stringify(a),
    "a new link is",
  );
  t.match(upLinksFingerprint("[{"), { ok: false });
  // iproute2 6.1 prints an empty object for each link `up` filters out (kube-ipvs0 among them).
  t.same(upLinksFingerprint(addrs().replace(/\]$/, ",{},{}]")), a, "the filtered links' empty objects");
});

t.test("the gate: ipvs mode said by kube-proxy, synced, and every fingerprint read", async (t) => {
  const ok = {
    proxyMode: { ok: true, value: "ipvs" },
    metrics: { ok: true, value: v131() },
    ipsets: { ok: true, value: "Name: KUBE-CLUSTER-IP\nNumber of entries: 3\n" },
    links: { ok: true, value: addrs() },
  } as const;
  const k = ipvsGateKey(ok);
  t.match(k, { known: true, key: /svc 21 ep 57/ });
  t.same(ipvsGateKey(ok), k, "the same node: the same key");
  t.not(
    JSON.stringify(
      ipvsGateKey({ ...ok, ipsets: { ok: true, value: "Name: KUBE-CLUSTER-IP\nNumber of entries: 4\n" } }),
    ),
    JSON.stringify(k),
    "an ipset changed by anyone moves it",
  );
  t.same(
    ipvsGateKey({ ...ok, ipsets: { ok: true, value: null } }),
    { known: true, key: (k as { key: string }).key.replace(/ipsets [0-9a-f]+;/, "ipsets none;") },
    "no ip_set in the kernel is a fingerprint too",
  );
  t.match(ipvsGateKey({ ...ok, proxyMode: { ok: true, value: "nftables" } }), {
    known: false,
    why: /kube-proxy runs nftables mode, not ipvs/,
  });
  t.match(ipvsGateKey({ ...ok, proxyMode: { ok: false, why: "connection refused" } }), {
    known: false,
    why: /\/proxyMode not read: connection refused/,
  });
  t.match(ipvsGateKey({ ...ok, metrics: { ok: false, why: "timeout" } }), {
    known: false,
    why: /\/metrics not read: timeout/,
  });
  t.match(ipvsGateKey({ ...ok, ipsets: { ok: false, why: "exit 1" } }), {
    known: false,
    why: /ipsets not read: exit 1/,
  });
  t.match(ipvsGateKey({ ...ok, links: { ok: false, why: "garbage" } }), {
    known: false,
    why: /links not read: garbage/,
  });
});
