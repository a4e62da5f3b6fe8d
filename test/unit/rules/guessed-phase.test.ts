import t from "tap";
import { FINDING_IDS } from "../../../agent/rules/catalogue.js";
import { DEFAULT_RULE_OPTIONS } from "../../../agent/view/options.js";
import type { ProbeError } from "../../../agent/facts/probe-error.js";
import type { NodeFacts } from "../../../agent/report/schema.js";
import { addresses, ipvsNode, judge, kernel, kubeRouterNode, NOW } from "../../helpers/rules.js";
import {
  configz,
  emptyFacts,
  iptablesBackend,
  metrics,
  noKernelState,
  refused,
  vs,
} from "../../helpers/facts.js";
import { firstDeletion } from "../../helpers/remedies.js";
import { recordedConnNode } from "../../helpers/recorded-conn-node.js";

// When /proxyMode did not answer, the phase is a guess. No finding may then offer a
// command that deletes kernel state as the thing to do: it first says how to confirm what runs there and
// gives the deletion only conditionally. This walks the catalogue: every id either fires on one of the
// guessed-phase nodes below (and its remedy is checked), or is shown to need kube-proxy's own answer.

const CONFIRM = "Confirm first what runs on this node";
const CONDITION = "Only if ";

const silent = new Map<string, ProbeError>([["kube-proxy-mode", refused]]);

const nftTable = (family: "ip" | "ip6", serviceElements: number) => ({
  family,
  name: "kube-proxy",
  sets: [
    {
      name: "service-ips",
      kind: "map" as const,
      type: "ipv4_addr . inet_proto . inet_service : verdict",
      elements: serviceElements,
    },
    {
      name: "service-nodeports",
      kind: "map" as const,
      type: "inet_proto . inet_service : verdict",
      elements: 0,
    },
  ],
  chains: { total: 20, service: serviceElements, endpoint: serviceElements, external: 0, base: [] },
});
const nftables = (...kubeProxy: ReturnType<typeof nftTable>[]): NodeFacts["nftables"] => ({
  tables: kubeProxy.map((x) => ({ family: x.family, name: x.name, owner: "kube-proxy" })),
  kubeProxyTableName: "kube-proxy",
  kubeProxy,
  firewalls: [],
});
const IPVS_CHAINS = [
  { table: "nat", name: "KUBE-SERVICES", rules: 4, owner: "kube-proxy" as const },
  { table: "nat", name: "KUBE-NODE-PORT", rules: 2, owner: "kube-proxy-ipvs" as const },
];
const ipvsChains = iptablesBackend({ kubeChains: IPVS_CHAINS });
const kubeSets = {
  sets: ["KUBE-CLUSTER-IP", "KUBE-NODE-PORT-TCP", "KUBE-6-CLUSTER-IP"].map((name) => ({
    name,
    type: "hash:ip,port",
    family: null,
    entries: 2,
    references: 1,
    kubeProxy: true,
  })),
};
const kubeIpvs0 = (...addrs: string[]): NodeFacts["kubeIpvs0"] => ({
  present: true,
  kind: "dummy",
  operState: "DOWN",
  flags: [],
  addresses: addrs.map((address) => ({
    family: address.includes(":") ? ("inet6" as const) : ("inet" as const),
    address,
    prefixLen: 32,
  })),
});
const emptyIpvs = {
  available: true,
  virtualServerCount: 0,
  realServerCount: 0,
  schedulers: {},
  virtualServers: [],
  timeouts: null,
};
const strictArp = {
  values: [
    { name: "net.ipv4.conf.all.arp_ignore", value: "1" },
    { name: "net.ipv4.conf.all.arp_announce", value: "2" },
    { name: "net.netfilter.nf_conntrack_tcp_be_liberal", value: "1" },
  ],
};
const unhealthy = {
  status: 503,
  shape: "v1.33+" as const,
  healthy: false,
  lastUpdated: null,
  currentTime: null,
  nodeEligible: null,
};

/** Nodes on which kube-proxy did not answer /proxyMode, so the phase is inferred from kernel state. */
/**
 * An ipvs node whose kube-proxy went silent, with what the two switch checks of kube-proxy's listeners
 * and addresses read: an ETP-Local health-check port health-checked on a secondary address, and an
 * externalIP inside eth0's prefix that the node answers ARP for (strictARP off).
 */
function listenersAndArpNode(): NodeFacts {
  const f = ipvsNode({
    proxyMode: null,
    addresses: addresses("172.18.0.10", ["10.0.0.5"]),
    sysctls: {
      values: [
        { name: "net.ipv4.conf.all.arp_ignore", value: "0" },
        { name: "net.ipv4.conf.all.arp_announce", value: "0" },
      ],
    },
    listeners: {
      tcp: [{ family: "inet6", address: "::", port: 31234, kubeProxy: null }],
      kubeProxyProcess: { traced: false, why: "no process this agent can see holds the socket" },
      healthCheckPorts: { known: true, ports: [31234], source: "ipset" },
      conntrack: { read: true, to: [{ address: "10.0.0.5", port: 31234, connections: 3 }] },
    },
  });
  f.addresses!.interfaces[1]!.addresses[0]!.prefixLen = 16;
  f.kubeIpvs0!.addresses.push({ family: "inet", address: "172.18.200.1", prefixLen: 32 });
  return f;
}

const GUESSED: Record<string, [NodeFacts, Map<string, ProbeError>, string]> = {
  "ipvs node gone silent, with a health-check port used on a secondary address and an ARP-answered externalIP":
    [listenersAndArpNode(), silent, "ipvs"],
  // The case: a live ipvs node holding a table left by an nftables canary.
  "live ipvs node with a leftover nftables table": [
    ipvsNode({
      proxyMode: null,
      configz: null,
      kubeProxyMetrics: null,
      nftables: nftables(nftTable("ip", 3), nftTable("ip6", 0)),
      iptables: { backends: [ipvsChains] },
      ipsets: kubeSets,
    }),
    silent,
    "ipvs",
  ],
  // Everything a before-the-switch rule reads, on an ipvs node whose /proxyMode is not served (an old
  // build answering 404) while its other endpoints answer.
  "ipvs node whose /proxyMode is missing, every before-switch concern present": [
    ipvsNode({
      proxyMode: null,
      kernel: kernel("5.4.0-150-generic"),
      nftVersion: { version: "0.9.3", source: "dpkg" },
      kernelModules: { modules: [{ name: "nft_fib_ipv4", state: "absent" }], moduleTreeReadable: true },
      configz: configz({ ipvs: { ...configz().ipvs, scheduler: "lc", tcpTimeout: "15m0s" } }),
      kubeProxyMetrics: metrics(
        {
          kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 10,
          kubeproxy_sync_proxy_rules_no_local_endpoints_total: 2,
        },
        "v1.36.1",
      ),
      kubeProxyHealth: unhealthy,
      addresses: addresses("192.168.4.11", ["192.168.9.11"]),
      ipvs: {
        available: true,
        virtualServerCount: 4,
        realServerCount: 5,
        schedulers: { rr: 3, wlc: 1 },
        virtualServers: [
          vs("10.96.0.1", 443),
          // sessionAffinity: ClientIP, as ipvs mode programs it (persistent, timeout in jiffies)
          vs("10.96.0.10", 53, {
            protocol: "UDP",
            flags: ["persistent"],
            persistentTimeoutJiffies: 2_700_000,
          }),
          vs("192.168.9.11", 30080),
          vs("192.168.4.200", 80, { scheduler: "wlc" }),
        ],
        timeouts: { tcp: 900, tcpFin: 120, udp: 300 },
      },
      iptables: {
        backends: [
          iptablesBackend({
            kubeChains: IPVS_CHAINS,
            policies: { "filter/INPUT": "DROP" },
            foreignJumps: [
              { table: "filter", chain: "INPUT", rule: "-A INPUT -j KUBE-SERVICES", target: "KUBE-SERVICES" },
            ],
          }),
        ],
      },
      ipsets: { ...kubeSets, etpLocal: { addresses: ["TCP 203.0.113.10:443"], nodePorts: [] } },
      serviceConntrack: {
        etpLocalFromInside: {
          read: true,
          inside: "node addresses only",
          to: [{ destination: "TCP 203.0.113.10:443", connections: 3 }],
          destinations: 1,
        },
        serviceIpsOther: { read: true, to: [], flows: 0 },
      },
      sysctls: strictArp,
      nftables: nftables(nftTable("ip", 0)),
    }),
    new Map([["kube-proxy-mode", { kind: "http-status" as const, message: "404 Not Found" }]]),
    "ipvs",
  ],
  "host nft newer than kube-proxy's on a guessed ipvs node": [
    ipvsNode({
      proxyMode: null,
      nftVersion: { version: "1.1.3", source: "dpkg" },
      kubeProxyMetrics: metrics({}, "v1.33.1"),
    }),
    new Map([["kube-proxy-mode", { kind: "http-status" as const, message: "404 Not Found" }]]),
    "ipvs",
  ],
  // After a move to Cilium or Calico eBPF: kube-proxy gone, its state left, kube-ipvs0 black-holing.
  "kube-proxy gone, ipvs state left, kube-ipvs0 holding addresses with nothing behind them": [
    emptyFacts({
      ...noKernelState,
      kernel: kernel("6.8.0-51-generic"),
      ipvs: emptyIpvs,
      kubeIpvs0: kubeIpvs0("10.96.0.1", "10.96.0.10"),
      iptables: { backends: [ipvsChains] },
      ipsets: kubeSets,
      sysctls: strictArp,
      addresses: addresses("192.168.4.11"),
    }),
    silent,
    "none",
  ],
  "kube-proxy gone, IPVS virtual servers left without kube-ipvs0 and without real servers": [
    emptyFacts({
      ...noKernelState,
      ipvs: {
        ...emptyIpvs,
        virtualServerCount: 1,
        virtualServers: [vs("10.96.0.1", 443, { realServers: 0 })],
      },
      kubeIpvs0: kubeIpvs0("10.96.0.1"),
      addresses: addresses("192.168.4.11"),
    }),
    silent,
    "none",
  ],
  // kube-router took over the Services and kube-proxy's DaemonSet was deleted without `kube-proxy --cleanup`
  // (kube-router docs/kubeadm.md asks for it): kube-proxy's kube-ipvs0 and sets are left, and the live
  // virtual servers are kube-router's, on kube-dummy-if. None of them is kube-proxy's to guess from.
  "kube-router proxies Services; kube-proxy's kube-ipvs0 and ipsets left from before it": [
    ((f) => ({ ...f, ipsets: { ...f.ipsets!, sets: [...f.ipsets!.sets, ...kubeSets.sets] } }))(
      kubeRouterNode({ kubeIpvs0: kubeIpvs0("10.96.0.1", "10.96.0.10") }),
    ),
    silent,
    "none",
  ],
  "nftables state carrying Services, ipvs leftovers beside it": [
    emptyFacts({
      ...noKernelState,
      ipvs: emptyIpvs,
      kubeIpvs0: kubeIpvs0("10.96.0.1"),
      iptables: { backends: [ipvsChains] },
      ipsets: kubeSets,
      nftables: nftables(nftTable("ip", 5), nftTable("ip6", 0)),
    }),
    silent,
    "nftables",
  ],
  "iptables-mode chains carrying Services beside an empty nftables table": [
    emptyFacts({
      ...noKernelState,
      iptables: {
        backends: [
          iptablesBackend({
            kubeChains: [{ table: "nat", name: "KUBE-PROXY-CANARY", rules: 0, owner: "kube-proxy-iptables" }],
            patternCounts: { "KUBE-SVC-*": 4, "KUBE-SEP-*": 6 },
          }),
        ],
      },
      nftables: nftables(nftTable("ip", 0)),
    }),
    silent,
    "iptables",
  ],
  "kube-ipvs0 and ipsets present, IPVS table unreadable": [
    emptyFacts({
      ...noKernelState,
      ipvs: null,
      kubeIpvs0: kubeIpvs0("10.96.0.1"),
      ipsets: kubeSets,
      nftables: nftables(nftTable("ip", 5)),
    }),
    new Map([
      ["kube-proxy-mode", refused],
      ["ipvs", { kind: "missing-tool" as const, message: "no ip_vs in this kernel" }],
    ]),
    "unknown",
  ],
};

// The same node on a kernel that can run nftables mode: the concerns that only nftables mode raises (its
// NodePort reach, the host firewall, the conntrack workaround) are not given below 5.13, where iptables comes next.
{
  const [facts, failed, phase] =
    GUESSED["ipvs node whose /proxyMode is missing, every before-switch concern present"]!;
  GUESSED["the same node on kernel 6.8: the nftables-only concerns"] = [
    { ...facts, kernel: kernel("6.8.0-51-generic") },
    failed,
    phase,
  ];
}

function cleanupNode(failures: number): NodeFacts {
  return emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    nftables: nftables(nftTable("ip", 3)),
    kubeProxyMetrics: metrics(
      { kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total: failures },
      "v1.33.1",
    ),
  });
}
/** A node after the switch whose parity snapshot was compared: what IPVS served before, per Service. */
function parityNode(counts: {
  same: number;
  missingAfter: number;
  endpointsDiffer: number;
  newAfter: number;
}) {
  const status = counts.missingAfter > 0 ? "missing-after" : "endpoints-differ";
  return emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    nftables: nftables(nftTable("ip", 3)),
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5 }, "v1.35.4"),
    parity: {
      state: "compared",
      path: "/var/lib/proxyscope/ipvs-snapshot.json",
      takenAt: NOW - 600,
      ageSeconds: 600,
      maxAgeSeconds: 86_400,
      counts,
      services: [
        {
          service: null,
          protocol: "TCP",
          addresses: ["10.96.0.20:80"],
          status,
          endpointsBefore: 2,
          endpointsAfter: status === "missing-after" ? 0 : 2,
          gone: ["10.244.1.5:8080"],
          added: status === "missing-after" ? [] : ["10.244.1.9:8080"],
        },
      ],
      truncated: false,
    },
  });
}
/** The previous scan a witness needs (a cumulative counter is current only when it rose since). */
const PREVIOUS: Record<string, NodeFacts> = { "kube-proxy-cleanup-failing": cleanupNode(2) };

/** Docker's FORWARD DROP with no network plugin's accept. */
const forwardDrop = iptablesBackend({
  policies: { "filter/FORWARD": "DROP" },
  dockerChains: ["DOCKER", "DOCKER-USER"],
  forwardJumps: ["DOCKER-USER"],
});

/**
 * Ids that need kube-proxy's own /proxyMode answer: each with a node on which it fires when kube-proxy
 * answers, and must not fire once the answer is gone (the rest of the node unchanged).
 */
const ANSWER_NEEDED: Record<string, NodeFacts> = {
  "nftables-table-missing": emptyFacts({ ...noKernelState, proxyMode: { mode: "nftables" } }),
  "localhost-nodeports-rejected": emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    nftables: nftables(nftTable("ip", 3)),
    kubeProxyMetrics: metrics({ kubeproxy_nftables_localhost_nodeport_rejected_packets_total: 4 }, "v1.35.4"),
  }),
  "localhost-nodeports-in-use": emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "iptables" },
    kubeProxyMetrics: metrics(
      { kubeproxy_iptables_localhost_nodeports_accepted_packets_total: 4 },
      "v1.33.1",
    ),
  }),
  "localhost-nodeports-not-measurable": emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "iptables" },
    kubeProxyMetrics: metrics({}, "v1.30.8"),
  }),
  "kube-proxy-sync-failing": ipvsNode({
    kubeProxyMetrics: metrics(
      {
        kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 3600,
        kubeproxy_sync_proxy_rules_iptables_restore_failures_total: 3,
      },
      "v1.33.1",
    ),
  }),
  "kube-proxy-sync-failed-earlier": ipvsNode({
    kubeProxyMetrics: metrics(
      {
        kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 10,
        kubeproxy_sync_proxy_rules_iptables_restore_failures_total: 3,
      },
      "v1.33.1",
    ),
  }),
  "kube-proxy-cleanup-failing": cleanupNode(4),
  "kube-proxy-cleanup-failed-earlier": cleanupNode(2),
  "kube-proxy-rules-stale": ipvsNode({
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 3600 }, "v1.33.1"),
  }),
  // Both rest on what kube-proxy's ipvs mode does at the switch: only its own answer says it runs it.
  "ipvs-connections-cut-at-switch": recordedConnNode(),
  "ip-forward-not-persistent": ipvsNode({
    sysctls: { values: [{ name: "net.ipv4.ip_forward", value: "1" }] },
    sysctlConfig: {
      files: [],
      settings: [
        {
          name: "net.ipv4.ip_forward",
          keys: ["net.ipv4.ip_forward", "net.ipv4.conf.all.forwarding"],
          value: null,
          source: null,
        },
      ],
    },
  }),
  // Both rest on where kube-proxy's own mode DNATs (ipvs in INPUT, nftables in prerouting).
  "forward-drop-at-switch": ipvsNode({ iptables: { backends: [forwardDrop] } }),
  "ipvs-match-rules-stop-applying": ipvsNode({
    iptables: {
      backends: [
        iptablesBackend({
          ipvsMatches: [
            { table: "nat", chain: "POSTROUTING", rule: "-A POSTROUTING -m ipvs --ipvs -j ACCEPT" },
          ],
        }),
      ],
    },
  }),
  // Rests on kube-proxy's ipvs mode binding Service IPs on kube-ipvs0 until it switches: its own answer.
  "ip-rules-keyed-on-service-addresses": ipvsNode({
    ipRules: {
      families: [
        {
          family: "inet",
          available: true,
          rules: [
            {
              priority: 100,
              not: false,
              src: "10.96.0.0",
              srcLen: 12,
              dst: null,
              dstLen: null,
              text: "100: from 10.96.0.0/12 lookup 100",
            },
          ],
        },
        { family: "inet6", available: true, rules: [] },
      ],
    },
  }),
  "forward-drop-after-switch": emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    iptables: { backends: [forwardDrop] },
    nftables: nftables(nftTable("ip", 3)),
  }),
  "services-lost-in-switch": parityNode({ same: 3, missingAfter: 1, endpointsDiffer: 0, newAfter: 0 }),
  "service-endpoints-differ-after-switch": parityNode({
    same: 3,
    missingAfter: 0,
    endpointsDiffer: 1,
    newAfter: 0,
  }),
};

/** Ids whose job is to be silent on a guess, each with why (checked: they fire on no guessed node). */
const NEVER_ON_A_GUESS: Record<string, string> = {
  "kube-proxy-free": "says the node holds no kube-proxy state; a guess rests on state it holds",
  "kube-proxy-node-draining":
    "its remedy deletes nothing; fires from /healthz alone (tested in its own file)",
  "scan-incomplete":
    "a failed kube-proxy endpoint is the guess itself; the other probe failures are tested in its own file",
};

const seen = new Set<string>();
for (const [name, [facts, failed, phase]] of Object.entries(GUESSED)) {
  t.test(`guessed phase: ${name}`, async (t) => {
    const j = judge(facts, failed, NOW);
    t.equal(j.phase, phase, "the state that carries traffic decides the guess");
    t.equal(j.view.runningMode, null, "kube-proxy did not say its mode");
    t.ok(j.view.inferred, "the view says the phase is inferred");
    t.not(j.verdict, "ready", "a guess is never ready");
    t.not(j.verdict, "clean", "a guess is never clean");
    t.not(j.verdict, "leftovers", "leftovers would make deletion the thing to do");
    t.ok(
      j.findings.some((f) => f.id === "kube-proxy-not-answering"),
      "the report says kube-proxy did not answer and the phase is inferred",
    );
    for (const f of j.findings) {
      seen.add(f.id);
      const at = firstDeletion(f.remedy);
      if (at < 0) continue;
      t.ok(f.remedy.startsWith(CONFIRM), `${f.id}: says how to confirm first: ${f.remedy}`);
      const cond = f.remedy.indexOf(CONDITION);
      t.ok(cond >= 0 && cond < at, `${f.id}: deletes only conditionally: ${f.remedy}`);
    }
  });
}

t.test("kube-router's live Services are neither the guess nor leftovers nor a black hole", async (t) => {
  const [facts, failed] =
    GUESSED["kube-router proxies Services; kube-proxy's kube-ipvs0 and ipsets left from before it"]!;
  const j = judge(facts, failed, NOW);
  t.same(j.view.carrying, [], "kube-router's virtual servers carry no kube-proxy mode");
  const got: string[] = j.findings.map((f) => f.id);
  t.ok(got.includes("other-service-proxy-ipvs"), "kube-router is named");
  t.ok(got.includes("kube-ipvs0-left"), "kube-proxy's link is left");
  for (const id of ["ipvs-virtual-servers-left", "kube-ipvs0-black-hole", "strict-arp-sysctls-left"])
    t.notOk(got.includes(id), `no ${id}: the addresses are kube-router's, backed by its virtual servers`);
});

t.test("every finding id is checked on a guessed phase, or needs kube-proxy's answer", async (t) => {
  for (const [id, facts] of Object.entries(ANSWER_NEEDED)) {
    const answered = judge(facts, new Map(), NOW, DEFAULT_RULE_OPTIONS, PREVIOUS[id] ?? null);
    t.ok(
      answered.findings.some((f) => f.id === id),
      `${id} fires when kube-proxy answers ${facts.proxyMode?.mode}`,
    );
    const guessed = judge(
      { ...facts, proxyMode: null },
      silent,
      NOW,
      DEFAULT_RULE_OPTIONS,
      PREVIOUS[id] ?? null,
    );
    t.notOk(
      guessed.findings.some((f) => f.id === id),
      `${id} is silent once /proxyMode does not answer`,
    );
  }
  for (const id of Object.keys(NEVER_ON_A_GUESS)) t.notOk(seen.has(id), `${id} fires on no guess`);
  const unchecked = FINDING_IDS.filter(
    (id) => !seen.has(id) && !(id in ANSWER_NEEDED) && !(id in NEVER_ON_A_GUESS),
  );
  t.same(unchecked, [], "no finding id escapes the walk");
});
