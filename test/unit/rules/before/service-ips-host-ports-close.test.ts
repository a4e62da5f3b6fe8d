import t from "tap";
import { ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { iptablesBackend, metrics } from "../../../helpers/facts.js";
import type { NodeFacts } from "../../../../agent/report/schema.js";

// ipvs mode binds every Service IP on kube-ipvs0, so before KUBE-IPVS-FILTER (kubernetes/kubernetes#108460,
// first in v1.26.0) a host service listening on 0.0.0.0 answered on every ClusterIP and the ClusterIPs
// answered ping (k/k#72236). With the filter ipvs mode REJECTs new connections to kube-ipvs0's addresses
// on ports no Service serves, ICMP included; nftables mode rejects them too and drops unallocated
// ClusterIPs (pkg/proxy/nftables/proxier.go cluster-ips-check, v1.34.4). What an SRE expects: a node
// whose kube-proxy has no filter is told (a warning: whoever reached a host port or pinged a ClusterIP
// there loses it at the switch); a node with the filter is silent; a backend not read is never "absent".
const ID = "service-ips-host-ports-close";
const FILTER = { table: "filter", name: "KUBE-IPVS-FILTER", rules: 6, owner: "kube-proxy-ipvs" as const };
const SERVICES = { table: "nat", name: "KUBE-SERVICES", rules: 4, owner: "kube-proxy" as const };
const withChains = (version: string, chains: (typeof FILTER | typeof SERVICES)[], over = {}) =>
  ipvsNode({
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 10 }, version),
    iptables: {
      backends: [
        iptablesBackend({ kubeChains: chains }),
        iptablesBackend({ backend: "legacy", kubeChains: [] }),
      ],
    },
    ...over,
  });
const finding = (f: NodeFacts) => judge(f, new Map(), NOW).findings.find((x) => x.id === ID);

t.test("kube-proxy older than the filter and no KUBE-IPVS-FILTER: a warning, not a blocker", async (t) => {
  const f = finding(withChains("v1.24.17", [SERVICES]));
  t.equal(f?.severity, "warning");
  t.equal(f?.stage, "before");
  t.equal(f?.blocksMigration, false);
  t.equal(f?.evidence.kubeProxyVersion, "v1.24.17");
  t.equal(f?.evidence.kubeIpvsFilter, "absent (ipv4 legacy, ipv4 nft read)");
  t.equal(f?.evidence.serviceIps, 2);
  t.match(f?.title, /host services/);
});

t.test("a current kube-proxy with its filter in place: silent", async (t) => {
  t.notOk(finding(withChains("v1.34.4", [SERVICES, FILTER])));
});

t.test("the chain in place decides, whatever the version says", async (t) => {
  t.notOk(finding(withChains("v1.24.17", [SERVICES, FILTER])));
});

t.test(
  "a new kube-proxy whose filter chain is gone: told, with the version that should have it",
  async (t) => {
    const f = finding(withChains("v1.34.4", [SERVICES]));
    t.equal(f?.severity, "warning");
    t.match(f?.evidence.kubeProxyVersion, "v1.34.4");
    t.equal(f?.evidence.kubeIpvsFilter, "absent (ipv4 legacy, ipv4 nft read)");
  },
);

t.test("a backend not read is never absent: only the version can speak then", async (t) => {
  const unread = {
    backend: "legacy" as const,
    family: "ipv4" as const,
    read: false as const,
    why: { kind: "exec-failed" as const, message: "boom", command: "iptables-legacy-save -c" },
  };
  const partial = (version: string) =>
    withChains(version, [SERVICES], {
      iptables: { backends: [iptablesBackend({ kubeChains: [SERVICES] }), unread] },
    });
  t.notOk(finding(partial("v1.34.4")), "new kube-proxy, chain unknown: nothing said");
  const f = finding(partial("v1.24.17"));
  t.equal(f?.severity, "warning");
  t.match(f?.evidence.kubeIpvsFilter, /^not read: ipv4 legacy/);
  // The filter's first release, read from the module sources: pkg/proxy/ipvs/proxier.go names no
  // KUBE-IPVS-FILTER at v1.25.0 nor at the last 1.25 patch, v1.25.16, and does at v1.26.0.
  t.ok(finding(partial("v1.25.16")), "the last 1.25 release has no filter");
  t.notOk(finding(partial("v1.26.0")), "v1.26.0 has it");
});

t.test("neither the chain nor the version known: nothing said", async (t) => {
  const f = withChains("v1.24.17", [SERVICES], { iptables: null, kubeProxyMetrics: null });
  t.notOk(finding(f));
});

t.test("only while ipvs mode runs, and only with Service IPs on kube-ipvs0", async (t) => {
  t.notOk(finding(withChains("v1.24.17", [SERVICES], { proxyMode: { mode: "iptables" } })));
  const base = withChains("v1.24.17", [SERVICES]);
  t.notOk(finding({ ...base, kubeIpvs0: { ...base.kubeIpvs0!, addresses: [] } }));
});

t.test(
  "flows to Service IPs that no Service port explains: reliance seen, an error that blocks",
  async (t) => {
    const base = withChains("v1.24.17", [SERVICES]);
    const f = finding({
      ...base,
      serviceConntrack: {
        etpLocalFromInside: { read: true, inside: "node addresses", to: [], destinations: 0 },
        serviceIpsOther: {
          read: true,
          to: [
            { address: "10.96.0.10", what: "ICMP", connections: 3 },
            { address: "10.96.0.1", what: "TCP :22", connections: 1 },
          ],
          flows: 2,
        },
      },
    });
    t.equal(f?.severity, "error");
    t.equal(f?.blocksMigration, true);
    t.same(f?.evidence.flowsToServiceIps, [
      "10.96.0.10 ICMP (3 connections)",
      "10.96.0.1 TCP :22 (1 connections)",
    ]);
    t.match(f?.title, /in use/);
  },
);

t.test("conntrack not read: a warning that says so, never 'no flows'", async (t) => {
  const base = withChains("v1.24.17", [SERVICES]);
  const f = finding({
    ...base,
    serviceConntrack: {
      etpLocalFromInside: { read: false, why: "io: gone" },
      serviceIpsOther: { read: false, why: "io: gone" },
    },
  });
  t.equal(f?.severity, "warning");
  t.equal(f?.evidence.flowsToServiceIps, "not read: io: gone");
});

t.test(
  "flows seen prove no filter rejects, even with a backend unread and a current kube-proxy",
  async (t) => {
    const unread = {
      backend: "legacy" as const,
      family: "ipv4" as const,
      read: false as const,
      why: { kind: "exec-failed" as const, message: "boom", command: "iptables-legacy-save -c" },
    };
    const f = finding(
      withChains("v1.34.4", [SERVICES], {
        iptables: { backends: [iptablesBackend({ kubeChains: [SERVICES] }), unread] },
        serviceConntrack: {
          etpLocalFromInside: { read: true, inside: "node addresses", to: [], destinations: 0 },
          serviceIpsOther: {
            read: true,
            to: [{ address: "10.96.0.1", what: "ICMP", connections: 1 }],
            flows: 1,
          },
        },
      }),
    );
    t.equal(f?.severity, "error");
  },
);

t.test(
  "a link-local address on kube-ipvs0 is no Service IP: its family's backends are not asked",
  async (t) => {
    const base = withChains("v1.24.17", [SERVICES]);
    const f = finding({
      ...base,
      kubeIpvs0: {
        ...base.kubeIpvs0!,
        addresses: [...base.kubeIpvs0!.addresses, { family: "inet6", address: "fe80::1", prefixLen: 64 }],
      },
    });
    t.equal(f?.evidence.serviceIps, 2);
    t.equal(f?.evidence.kubeIpvsFilter, "absent (ipv4 legacy, ipv4 nft read)");
  },
);
