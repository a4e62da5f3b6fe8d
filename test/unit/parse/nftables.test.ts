import t from "tap";
import { readFileSync, existsSync } from "node:fs";
import { parseNftChains, parseNftSets, parseNftTables } from "../../../agent/parse/nft-json.js";
import { nftablesFacts } from "../../../agent/parse/nftables-facts.js";

const dir = new URL("../../fixtures/netfilter/recorded/", import.meta.url);
const read = (s: string, f: string) => readFileSync(new URL(`${s}/${f}`, dir), "utf8");

function facts(scenario: string, tableName = "kube-proxy") {
  const tables = parseNftTables(read(scenario, "nft-list-tables.json"));
  const chains = parseNftChains(read(scenario, "nft-list-chains.json"));
  if (!tables.ok || !chains.ok) throw new Error("fixture did not parse");
  const sets = [];
  for (const fam of ["ip", "ip6"]) {
    for (const what of ["sets", "maps"]) {
      const f = `nft-list-${what}-${fam}.json`;
      if (!existsSync(new URL(`${scenario}/${f}`, dir))) continue;
      const p = parseNftSets(read(scenario, f));
      if (!p.ok) throw new Error(p.error);
      sets.push(...p.value);
    }
  }
  return nftablesFacts({ tables: tables.value, chains: chains.value, sets }, tableName);
}

const V134_SETS = [
  { name: "cluster-ips", kind: "set", type: "ipv4_addr", elements: 6 },
  { name: "nodeport-ips", kind: "set", type: "ipv4_addr", elements: 1 },
  { name: "firewall-ips", kind: "map", type: "ipv4_addr . inet_proto . inet_service", elements: 1 },
  { name: "no-endpoint-nodeports", kind: "map", type: "inet_proto . inet_service", elements: 1 },
  { name: "no-endpoint-services", kind: "map", type: "ipv4_addr . inet_proto . inet_service", elements: 3 },
  { name: "service-ips", kind: "map", type: "ipv4_addr . inet_proto . inet_service", elements: 9 },
  { name: "service-nodeports", kind: "map", type: "inet_proto . inet_service", elements: 3 },
];

t.test("1.34 layout: kube-proxy table, iptables-nft's compat tables (kubelet) marked as such", async (t) => {
  const f = facts("nftables-v1.34");
  t.same(
    f.tables.map((x) => `${x.family} ${x.name} ${x.owner}`),
    [
      "ip mangle iptables-nft",
      "ip nat iptables-nft",
      "ip filter iptables-nft",
      "ip6 mangle iptables-nft",
      "ip6 nat iptables-nft",
      "ip6 filter iptables-nft",
      "ip kube-proxy kube-proxy",
    ],
  );
  t.same(f.kubeProxy, [
    {
      family: "ip",
      name: "kube-proxy",
      sets: V134_SETS,
      // From the recorded service-nodeports and no-endpoint-nodeports maps.
      nodePorts: ["TCP:3001", "TCP:3002", "TCP:3003"],
      // ns2/svc2's 3001 is also in no-endpoint-nodeports (ETP Local, no local endpoint): no connect goes there.
      nodePortsWithEndpoints: ["TCP:3002", "TCP:3003"],
      nodePortIPs: ["192.168.0.2"],
      chains: {
        total: 32,
        service: 5,
        endpoint: 6,
        external: 4,
        base: [
          "filter-prerouting-pre-dnat",
          "filter-output-pre-dnat",
          "filter-forward",
          "filter-input",
          "filter-output",
          "nat-output",
          "nat-postrouting",
          "nat-prerouting",
        ],
      },
    },
  ]);
  t.same(f.firewalls, []);
});

t.test("pre-1.34 layout, dual stack: both tables, old base chain names", async (t) => {
  const f = facts("nftables-pre1.34-dualstack");
  t.same(
    f.kubeProxy.map((k) => [k.family, k.chains.base]),
    [
      [
        "ip",
        [
          "filter-prerouting",
          "filter-forward",
          "filter-input",
          "filter-output",
          "nat-output",
          "nat-postrouting",
          "nat-prerouting",
        ],
      ],
      [
        "ip6",
        [
          "filter-forward",
          "filter-input",
          "filter-output",
          "filter-output-post-dnat",
          "filter-prerouting",
          "nat-output",
          "nat-postrouting",
          "nat-prerouting",
        ],
      ],
    ],
  );
  t.same(f.kubeProxy[1]?.chains, {
    ...f.kubeProxy[1]?.chains,
    total: 20,
    service: 1,
    endpoint: 2,
    external: 1,
  });
  t.same(
    f.kubeProxy[1]?.sets.find((s) => s.name === "nodeport-ips"),
    { name: "nodeport-ips", kind: "set", type: "ipv6_addr", elements: 2 },
  );
});

t.test("firewalld and a hand-written host firewall", async (t) => {
  t.same(facts("firewalld").firewalls, [
    { family: "inet", name: "firewalld", kind: "firewalld", hooks: ["input:drop", "forward:accept"] },
  ]);
  t.same(facts("host-firewall").firewalls, [
    { family: "inet", name: "filter", kind: "host-firewall", hooks: ["input:drop", "forward:drop"] },
  ]);
});

t.test("a renamed kube-proxy table is found only under its configured name", async (t) => {
  const f = facts("nftables-v1.34", "kp-custom");
  t.same(f.kubeProxy, []);
  t.equal(f.tables.find((x) => x.name === "kube-proxy")?.owner, "other");
  t.equal(f.kubeProxyTableName, "kp-custom");
});

t.test("empty node, and garbage", async (t) => {
  t.same(facts("empty"), { tables: [], kubeProxyTableName: "kube-proxy", kubeProxy: [], firewalls: [] });
  for (const bad of [
    "",
    "{",
    "[]",
    '{"nftables": 3}',
    '{"nftables": [{"table": {"family": "xdp", "name": "x"}}]}',
  ]) {
    t.equal(parseNftTables(bad).ok, false, bad);
  }
  t.equal(parseNftChains('{"nftables": [{"chain": {"family": "ip"}}]}').ok, false);
  t.equal(
    parseNftSets('{"nftables": [{"set": {"family": "ip", "table": "t", "name": "s", "elem": 5}}]}').ok,
    false,
  );
  const whole = read("nftables-v1.34", "nft-list-chains.json");
  t.equal(parseNftChains(whole.slice(0, whole.length / 2)).ok, false, "truncated JSON");
});

t.test("a set's type in any shape is described, never a throw and never a failed read", async (t) => {
  // The fuzz test found String() of {"toString": <number>} throwing TypeError. Newer nft prints a set
  // declared with typeof as {"typeof": <expression>} (libnftables json.c, set_key_dtype_json); nft 1.0.6
  // here prints the names (recorded: "type": ["ipv4_addr", "inet_service"] for typeof ip saddr . tcp dport).
  const { parseNftSetNames } = await import("../../../agent/parse/nft-json.js");
  const set = (type: unknown) =>
    JSON.stringify({ nftables: [{ set: { family: "ip", name: "s", table: "kube-proxy", type } }] });
  const cases: [unknown, string][] = [
    ["ipv4_addr", "ipv4_addr"],
    [["ipv4_addr", "inet_proto", "inet_service"], "ipv4_addr . inet_proto . inet_service"],
    [undefined, ""],
    [
      { typeof: { payload: { protocol: "ip", field: "saddr" } } },
      'typeof {"payload":{"protocol":"ip","field":"saddr"}}',
    ],
    [{ toString: -5e-324 }, '{"toString":-5e-324}'],
    [[{ toString: 1 }], '[{"toString":1}]'],
    [7, "7"],
  ];
  const long = parseNftSets(
    set({ typeof: { concat: Array(100).fill({ payload: { protocol: "ip", field: "saddr" } }) } }),
  );
  t.ok(long.ok && long.value[0]!.type.length <= 201, "an odd type is cut to a bounded length");
  for (const [type, want] of cases) {
    for (const parse of [parseNftSets, parseNftSetNames]) {
      let r: ReturnType<typeof parseNftSets> | ReturnType<typeof parseNftSetNames> | undefined;
      t.doesNotThrow(() => (r = parse(set(type))), JSON.stringify(type));
      t.equal(r?.ok && r.value[0]!.type, want, JSON.stringify(type));
    }
  }
});
