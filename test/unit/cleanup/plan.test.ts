import t from "tap";
import { readFileSync } from "node:fs";
import { applyAllowed } from "../../../agent/cleanup/interlock.js";
import { parseRuleSet, type IptablesRuleSet } from "../../../agent/cleanup/iptables-rules.js";
import { planCleanup } from "../../../agent/cleanup/plan.js";
import { isKubeProxyIpset } from "../../../agent/facts/owners.js";
import { parseIpAddrJson } from "../../../agent/parse/ip-json.js";
import { parseIpsetMembers } from "../../../agent/parse/ipset-list.js";
import { vsKey } from "../../../agent/parse/ipvs-proc.js";
import type { IpvsEvidence } from "../../../agent/cleanup/ipvs-proof.js";
import type { IpvsFacts, VirtualServer } from "../../../agent/facts/ipvs.js";
import type { NodeFacts, NodeReport } from "../../../agent/report/schema.js";
import { emptyFacts, noKernelState } from "../../helpers/facts.js";

// Real iptables-save output, recorded in namespaces (test/fixtures/netfilter/README.md).
const REC = new URL("../../fixtures/netfilter/recorded/", import.meta.url);
const recorded = (scenario: string, file: string, backend: IptablesRuleSet["backend"]): IptablesRuleSet => {
  const r = parseRuleSet(readFileSync(new URL(`${scenario}/${file}`, REC), "utf8"), backend, "ipv4");
  if ("error" in r) throw new Error(r.error);
  return r;
};
const text = (save: string): IptablesRuleSet => {
  const r = parseRuleSet(save, "legacy", "ipv4");
  if ("error" in r) throw new Error(r.error);
  return r;
};

const vs = (address: string, port: number, protocol: VirtualServer["protocol"] = "TCP"): VirtualServer => ({
  protocol,
  family: "inet",
  address,
  port,
  fwmark: null,
  scheduler: "rr",
  flags: [],
  persistentTimeoutJiffies: null,
  realServers: 1,
  activeConns: 0,
  inactiveConns: 0,
});

function report(over: Partial<NodeFacts>, extra: Partial<NodeReport> = {}): NodeReport {
  return {
    schemaVersion: "1",
    agentVersion: "test",
    node: "n1",
    scannedAt: "2026-01-01T00:00:00.000Z",
    scanDurationMs: 1,
    phase: "nftables",
    phaseSource: "proxyMode",
    mixed: [],
    verdict: "leftovers",
    findings: [],
    probes: [],
    truncated: {},
    facts: emptyFacts({ ...noKernelState, proxyMode: { mode: "nftables" }, ...over }),
    ...extra,
  };
}

const ipvsFacts = (list: VirtualServer[]): IpvsFacts => ({
  available: true,
  virtualServerCount: list.length,
  realServerCount: list.length,
  schedulers: { rr: list.length },
  virtualServers: list,
  timeouts: null,
});
// The deletion proof reads each virtual server's forwarding and kube-proxy's ipset members; the sets
// here are those recorded in UML (10.96.0.1,tcp:443, 10.96.0.10,tcp|udp:53 and NodePort 30080).
const recordedSets = parseIpsetMembers(
  readFileSync(new URL("../../fixtures/ipvs/ipsets/kube/ipset-list.txt", import.meta.url), "utf8"),
);
const masq = (list: VirtualServer[]): IpvsEvidence => ({
  read: true,
  forwards: new Map(list.map((v) => [vsKey(v), ["Masq"]])),
  sets: recordedSets.ok ? recordedSets.value : new Map(),
});
const kubeIpvs0 = (...addresses: string[]): NodeFacts["kubeIpvs0"] => ({
  present: true,
  kind: "dummy",
  operState: "DOWN",
  flags: [],
  addresses: addresses.map((address) => ({ family: "inet" as const, address, prefixLen: 32 })),
});
const addresses: NodeFacts["addresses"] = {
  interfaces: [
    {
      name: "eth0",
      kind: null,
      operState: "UP",
      addresses: [
        { family: "inet", address: "192.168.77.2", prefixLen: 24, scope: "global" },
        { family: "inet", address: "192.168.77.10", prefixLen: 32, scope: "global" },
      ],
    },
  ],
  primary: { ipv4: "192.168.77.2", ipv6: null, source: "config" },
};

t.test(
  "ipvs-mode chains: jumps first, then flushes, then deletes; kubelet's are never touched",
  async (t) => {
    const plan = planCleanup(
      report({}),
      [recorded("nftables-ipvs-leftovers", "iptables-nft-save.txt", "nft")],
      {
        strictArp: false,
      },
    );
    const cmds = plan.actions.map((a) => a.command);
    t.same(plan.kept, []);
    const steps = plan.actions.map((a) => a.step);
    t.same([...new Set(steps)], ["iptables-delete-jump", "iptables-flush-chain", "iptables-delete-chain"]);
    t.equal(steps.filter((s) => s === "iptables-delete-jump").length, 9, "every iptablesJumpChain entry");
    t.equal(
      steps.filter((s) => s === "iptables-delete-chain").length,
      11,
      "11 of the 16 KUBE-* chains are kube-proxy's",
    );
    t.ok(
      cmds.includes(
        "iptables-nft -w 5 -t nat -D POSTROUTING -m comment --comment 'kubernetes postrouting rules' -j KUBE-POSTROUTING",
      ),
    );
    t.notOk(
      cmds.some((c) => /KUBE-FIREWALL|KUBE-KUBELET-CANARY|KUBE-IPTABLES-HINT/.test(c)),
      "kubelet's chains and jumps stay",
    );
    const del = plan.actions.find((a) => a.step === "iptables-delete-jump");
    t.same(
      del?.run,
      {
        kind: "exec",
        tool: "iptables-nft",
        args: [
          "-w",
          "5",
          "-t",
          "filter",
          "-D",
          "INPUT",
          "-m",
          "comment",
          "--comment",
          "kubernetes ipvs access filter",
          "-j",
          "KUBE-IPVS-FILTER",
        ],
      },
      "the comment is one argv element, no shell quoting",
    );
  },
);

t.test(
  "a foreign jump keeps the chain whole and everything it reaches (iptables-mode leftovers)",
  async (t) => {
    const plan = planCleanup(report({}), [recorded("foreign-jump", "iptables-nft-save.txt", "nft")], {
      strictArp: false,
    });
    const kept = Object.fromEntries(plan.kept.map((k) => [k.what, k.why]));
    t.match(kept["nft ipv4 nat/KUBE-SERVICES"], /did not write still jumps to it: -A (MY-PORTAL|OUTPUT)/);
    t.match(kept["nft ipv4 nat/KUBE-MARK-MASQ"], /^reached from KUBE-\S+, which stays$/);
    t.match(kept["nft ipv4 filter/KUBE-FORWARD"], /-A FORWARD -i cni0 -j KUBE-FORWARD/);
    t.ok(
      Object.keys(kept).some((k) => /nat\/KUBE-SEP-/.test(k)),
      "endpoint chains behind a kept Service stay",
    );
    const cmds = plan.actions.map((a) => a.command);
    t.notOk(
      cmds.some((c) => /-t nat -[FX] KUBE-SERVICES$/.test(c)),
      "nat KUBE-SERVICES is neither flushed nor deleted",
    );
    t.ok(cmds.includes("iptables-nft -w 5 -t nat -X KUBE-POSTROUTING"), "an unreferenced chain still goes");
    t.ok(cmds.includes("iptables-nft -w 5 -t filter -X KUBE-PROXY-CANARY"), "iptables mode's canary goes");
    t.ok(
      cmds.some((c) => c.includes("-D PREROUTING -m comment --comment 'kubernetes service portals'")),
      "kube-proxy's own jump into a kept chain still goes",
    );
    t.notOk(
      cmds.some((c) => c.includes("MY-PORTAL") || c.includes("cni0")),
      "foreign rules are never touched",
    );
  },
);

t.test("sets: kept while a rule that stays matches them, destroyed after the chains otherwise", async (t) => {
  const sets = ["KUBE-CLUSTER-IP", "KUBE-LOOP-BACK", "KUBE-6-CLUSTER-IP", "cali40all-hosts"].map((name) => ({
    name,
    type: "hash:ip,port",
    family: "inet" as const,
    entries: 1,
    references: 1,
    kubeProxy: name.startsWith("KUBE-"),
  }));
  const save = [
    "*nat",
    ":PREROUTING ACCEPT [0:0]",
    ":KUBE-SERVICES - [0:0]",
    ":KUBE-POSTROUTING - [0:0]",
    ":MINE - [0:0]",
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    "-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT",
    "-A KUBE-POSTROUTING -m set --match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE",
    "-A MINE -m set ! --match-set KUBE-CLUSTER-IP dst,dst -j RETURN",
    "COMMIT",
  ].join("\n");
  const plan = planCleanup(report({ ipsets: { sets } }), [text(save)], { strictArp: false });
  const cmds = plan.actions.map((a) => a.command);
  t.same(
    cmds.filter((c) => c.startsWith("ipset")),
    ["ipset destroy KUBE-LOOP-BACK", "ipset destroy KUBE-6-CLUSTER-IP"],
  );
  t.ok(
    cmds.indexOf("ipset destroy KUBE-LOOP-BACK") >
      cmds.indexOf("iptables-legacy -w 5 -t nat -X KUBE-POSTROUTING"),
  );
  t.match(plan.kept, [
    { what: "ipset KUBE-CLUSTER-IP", why: /matched by legacy ipv4 nat\/MINE, which stays/ },
  ]);
  t.ok(
    cmds.includes("iptables-legacy -w 5 -t nat -X KUBE-SERVICES"),
    "a chain that only matches a kept set still goes",
  );
});

t.test(
  "IPVS: --clear without foreign virtual servers, per service with them, nothing when unsure",
  async (t) => {
    const mine = [vs("10.96.0.1", 443), vs("10.96.0.10", 53, "UDP"), vs("192.168.77.2", 30080)];
    const clean = planCleanup(
      report({ ipvs: ipvsFacts(mine), kubeIpvs0: kubeIpvs0("10.96.0.1", "10.96.0.10"), addresses }),
      [],
      { strictArp: false, ipvsEvidence: masq(mine) },
    );
    t.same(
      clean.actions.map((a) => a.command),
      ["ipvsadm --clear", "ip link delete kube-ipvs0"],
      "virtual servers before the link",
    );

    const withVip = [...mine, vs("192.168.77.10", 80)];
    const mixed = planCleanup(
      report({ ipvs: ipvsFacts(withVip), kubeIpvs0: kubeIpvs0("10.96.0.1", "10.96.0.10"), addresses }),
      [],
      { strictArp: false, ipvsEvidence: masq(withVip) },
    );
    t.same(
      mixed.actions.map((a) => a.command),
      [
        "ipvsadm -D -t 10.96.0.1:443",
        "ipvsadm -D -u 10.96.0.10:53",
        "ipvsadm -D -t 192.168.77.2:30080",
        "ip link delete kube-ipvs0",
      ],
    );
    t.same(
      mixed.kept.map((k) => k.what),
      ["IPVS TCP 192.168.77.10:80"],
    );

    // kube-ipvs0 not read (or deleted) no longer hides kube-proxy's own: its sets say it.
    const noLink = planCleanup(report({ ipvs: ipvsFacts(mine), kubeIpvs0: null, addresses }), [], {
      strictArp: false,
      ipvsEvidence: masq(mine),
    });
    t.same(
      noLink.actions.map((a) => a.command),
      ["ipvsadm --clear"],
    );
    const unsure = planCleanup(report({ ipvs: ipvsFacts(mine), kubeIpvs0: null, addresses }), [], {
      strictArp: false,
    });
    t.same(unsure.actions, [], "without the forwarding and the sets nothing in IPVS is anyone's to delete");
    // Stricter than before: the virtual servers were left out of the plan altogether;
    // now each is named, among what could not be read, so the plan never says "nothing to remove".
    t.same(
      unsure.unread.map((k) => k.what),
      ["IPVS TCP 10.96.0.1:443", "IPVS UDP 10.96.0.10:53", "IPVS TCP 192.168.77.2:30080", "kube-ipvs0"],
    );
    t.match(unsure.unread[0], { why: /^cannot tell whose it is: the IPVS table and kube-proxy's ipsets/ });

    const cut = planCleanup(
      report(
        {
          ipvs: { ...ipvsFacts(mine), virtualServerCount: 9000 },
          kubeIpvs0: kubeIpvs0("10.96.0.1"),
          addresses,
        },
        {
          truncated: { "facts.ipvs.virtualServers": 9000 },
        },
      ),
      [],
      { strictArp: false },
    );
    t.notOk(
      cut.actions.some((a) => a.command.startsWith("ipvsadm")),
      "a cut list never leads to --clear",
    );
    t.match(cut.unread[0]?.why, /lists only part of them/);
  },
);

t.test("strictARP only on request; a backend that could not be read is left alone", async (t) => {
  const sysctls = {
    values: [
      { name: "net.ipv4.conf.all.arp_ignore", value: "1" },
      { name: "net.ipv4.conf.all.arp_announce", value: "0" },
    ],
  };
  const off = planCleanup(report({ sysctls }), [], { strictArp: false });
  t.same(off.actions, []);
  t.match(off.kept[0]?.why, /--strict-arp/);
  const on = planCleanup(
    report({ sysctls }),
    [{ backend: "nft", family: "ipv6", error: "ip6tables-nft-save: exited 1" }],
    {
      strictArp: true,
    },
  );
  t.same(
    on.actions.map((a) => [a.command, a.run]),
    [
      [
        "sysctl -w net.ipv4.conf.all.arp_ignore=0",
        { kind: "sysctl", name: "net.ipv4.conf.all.arp_ignore", value: "0" },
      ],
    ],
  );
  // Named among what could not be read, not among what was read and kept.
  t.same(on.unread, [
    { what: "iptables nft ipv6", why: "rules not read, nothing touched: ip6tables-nft-save: exited 1" },
  ]);
});

t.test("the interlock: only a kube-proxy that answers nftables", async (t) => {
  t.same(applyAllowed(report({})), { ok: true });
  t.match(applyAllowed(report({ proxyMode: { mode: "ipvs" } })), { ok: false, reason: /answers "ipvs"/ });
  t.match(applyAllowed(report({ proxyMode: { mode: "" } })), { ok: false, reason: /answers ""/ });
  const silent = report(
    { proxyMode: null },
    {
      probes: [
        {
          name: "kube-proxy-mode",
          ok: false,
          durationMs: 1,
          error: { kind: "unreachable", message: "ECONNREFUSED" },
        },
      ],
    },
  );
  t.match(applyAllowed(silent), { ok: false, reason: /cannot tell .*\(unreachable: ECONNREFUSED\)/ });
});

t.test("iptables-save parsing keeps only what cleanup needs and rejects garbage", async (t) => {
  const r = parseRuleSet(
    '*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES\n-A PREROUTING -j ACCEPT\nCOMMIT\n',
    "legacy",
    "ipv4",
  );
  t.same(r, {
    backend: "legacy",
    family: "ipv4",
    tables: [
      {
        table: "nat",
        builtins: ["PREROUTING"],
        chains: ["KUBE-SERVICES"],
        rules: [
          {
            chain: "PREROUTING",
            argv: [
              "-A",
              "PREROUTING",
              "-m",
              "comment",
              "--comment",
              "kubernetes service portals",
              "-j",
              "KUBE-SERVICES",
            ],
            target: "KUBE-SERVICES",
            comment: "kubernetes service portals",
            matchSets: [],
          },
        ],
      },
    ],
  });
  t.match(parseRuleSet("*nat\n-A X -j Y\n", "legacy", "ipv4"), { error: /ends inside table \*nat/ });
  t.match(parseRuleSet("garbage\n", "legacy", "ipv4"), { error: /line 1: line outside a table/ });
});

t.test(
  "an interface name with ESC: ip -j prints invalid JSON, and cleanup does not decide ownership",
  async (t) => {
    // Recorded from iproute2 6.1 (test/fixtures/tools/ip/addr-show-esc-ifname.README): the raw ESC
    // byte inside a JSON string makes the whole output unparsable.
    const out = readFileSync(
      new URL("../../fixtures/tools/ip/addr-show-esc-ifname.json", import.meta.url),
      "utf8",
    );
    t.ok(out.includes("\u001b"), "the recorded output carries the raw ESC byte");
    const parsedAddrs = parseIpAddrJson(out);
    t.notOk(parsedAddrs.ok, "unparsable, never an empty interface list");
    if (parsedAddrs.ok) return;
    t.match(parsedAddrs.error, /^ip -j -d addr show is not JSON: /);
    // The probe turns that into addresses: null; a NodePort-looking virtual server is then nobody's to delete.
    const mine = [vs("10.96.0.1", 443), vs("192.168.77.2", 30080)];
    const p = planCleanup(
      report({ ipvs: ipvsFacts(mine), kubeIpvs0: kubeIpvs0("10.96.0.1"), addresses: null }),
      [],
      { strictArp: false, ipvsEvidence: masq(mine) },
    );
    t.notOk(
      p.actions.some((a) => a.command === "ipvsadm --clear" || a.command.includes("192.168.77.2")),
      "no deletion of what only the unread addresses could attribute",
    );
    t.match(
      p.unread.find((k) => k.what === "IPVS TCP 192.168.77.2:30080"),
      { why: /^cannot tell whose it is: the node's addresses not read/ },
    );
  },
);

// k3s runs kube-router's network-policy controller on every node. Its KUBE-ROUTER-*,
// KUBE-NWPLCY-*, KUBE-POD-FW-* chains and KUBE-SRC-*/KUBE-DST-*/kube-router-* sets start like kube-proxy's
// and are in use: cleanup never plans touching them, and a foreign rule still matching kube-proxy's set keeps it.
t.test("kube-router's chains and sets are never planned for deletion (k3s)", async (t) => {
  const names = [
    "KUBE-CLUSTER-IP",
    "KUBE-LOOP-BACK",
    "KUBE-SRC-J2JLXWMHRQG4ZLAD",
    "KUBE-DST-VQ3N7PSJ4XKOHR2L",
    "kube-router-local-pods",
  ];
  // As the ipsets probe marks them: by kube-proxy's exact names (facts/owners.ts isKubeProxyIpset).
  const sets = names.map((name) => ({
    name,
    type: "hash:ip",
    family: "inet" as const,
    entries: 1,
    references: 1,
    kubeProxy: isKubeProxyIpset(name),
  }));
  t.same(
    sets.filter((s) => s.kubeProxy).map((s) => s.name),
    ["KUBE-CLUSTER-IP", "KUBE-LOOP-BACK"],
  );
  const plan = planCleanup(
    report({ ipsets: { sets } }),
    [recorded("k3s-kube-router", "iptables-nft-save.txt", "nft")],
    { strictArp: false },
  );
  const cmds = plan.actions.map((a) => a.command);
  t.ok(cmds.length > 0, "kube-proxy's own ipvs-mode chains are planned");
  t.notOk(
    cmds.some((c) =>
      /KUBE-ROUTER|KUBE-NWPLCY|KUBE-POD-FW|KUBE-SRC-|KUBE-DST-|kube-router|FLANNEL|DOCKER/.test(c),
    ),
    "nothing of kube-router's, Flannel's or Docker's",
  );
  t.same(
    cmds.filter((c) => c.startsWith("ipset")),
    ["ipset destroy KUBE-LOOP-BACK"],
  );
  t.match(
    plan.kept.find((k) => k.what === "ipset KUBE-CLUSTER-IP")?.why,
    /matched by nft ipv4 filter\/MY-ALLOW, which stays/,
  );
});
