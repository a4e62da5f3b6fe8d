import t from "tap";
import { readFileSync, readdirSync } from "node:fs";
import { IptablesSaveParser, parseIptablesSave } from "../../../agent/parse/iptables-save.js";
import { chainOwner } from "../../../agent/facts/owners.js";

const dir = new URL("../../fixtures/netfilter/recorded/", import.meta.url);
const read = (scenario: string, file: string) => readFileSync(new URL(`${scenario}/${file}`, dir), "utf8");
const FILES = [
  ["iptables-nft-save.txt", "nft", "ipv4"],
  ["ip6tables-nft-save.txt", "nft", "ipv6"],
  ["iptables-legacy-save.txt", "legacy", "ipv4"],
  ["ip6tables-legacy-save.txt", "legacy", "ipv6"],
] as const;

t.test("every recorded *-save output parses, whole or line by line alike", async (t) => {
  const scenarios = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory());
  t.equal(scenarios.length, 12);
  for (const s of scenarios) {
    for (const [file, backend, family] of FILES) {
      const text = read(s.name, file);
      const whole = parseIptablesSave(text, backend, family);
      t.ok(whole.ok, `${s.name}/${file}`);
      const p = new IptablesSaveParser(backend, family);
      for (const l of text.split("\n")) p.feed(l);
      t.same(p.finish(), whole, `${s.name}/${file} streamed`);
    }
  }
});

t.test(
  "iptables mode (nft backend): owners, per-Service counts, NodePort accepts with counters",
  async (t) => {
    const r = parseIptablesSave(read("iptables-mode", "iptables-nft-save.txt"), "nft", "ipv4");
    if (!r.ok) return t.fail(r.error);
    const f = r.value;
    t.equal(f.totalRules, 79);
    t.same(f.patternCounts, { "KUBE-EXT-*": 4, "KUBE-FW-*": 1, "KUBE-SEP-*": 6, "KUBE-SVC-*": 5 });
    const owner = (table: string, name: string) =>
      f.kubeChains.find((c) => c.table === table && c.name === name);
    t.same(owner("nat", "KUBE-SERVICES"), {
      table: "nat",
      name: "KUBE-SERVICES",
      rules: 10,
      owner: "kube-proxy",
    });
    t.same(owner("nat", "KUBE-NODEPORTS"), {
      table: "nat",
      name: "KUBE-NODEPORTS",
      rules: 6,
      owner: "kube-proxy-iptables",
    });
    t.same(owner("filter", "KUBE-FIREWALL"), {
      table: "filter",
      name: "KUBE-FIREWALL",
      rules: 1,
      owner: "kubelet",
    });
    t.same(owner("mangle", "KUBE-PROXY-CANARY")?.owner, "kube-proxy-iptables");
    t.same(owner("mangle", "KUBE-IPTABLES-HINT")?.owner, "kubelet");
    t.equal(f.kubeChains.length, 17);
    t.same(
      f.foreignJumps,
      [],
      "kube-proxy's commented jumps and kubelet's bare KUBE-FIREWALL jumps are not foreign",
    );
    t.same(
      f.nodePortAccepts.find((a) => a.chain === "KUBE-NODEPORTS"),
      {
        table: "filter",
        chain: "KUBE-NODEPORTS",
        rule: '-A KUBE-NODEPORTS -p tcp -m comment --comment "ns2/svc2:p80 health check node port" -m tcp --dport 30000 -j ACCEPT',
        packets: 3,
        bytes: 180,
      },
    );
    t.equal(f.policies["filter/INPUT"], "ACCEPT");
  },
);

t.test("foreign jumps into KUBE-* chains are listed, kube-proxy's and kubelet's are not", async (t) => {
  const r = parseIptablesSave(read("foreign-jump", "iptables-nft-save.txt"), "nft", "ipv4");
  if (!r.ok) return t.fail(r.error);
  t.same(r.value.foreignJumps, [
    { table: "filter", chain: "FORWARD", rule: "-A FORWARD -i cni0 -j KUBE-FORWARD", target: "KUBE-FORWARD" },
    {
      table: "nat",
      chain: "OUTPUT",
      rule: "-A OUTPUT -d 10.96.0.10/32 -p tcp -m tcp --dport 53 -j KUBE-SERVICES",
      target: "KUBE-SERVICES",
    },
    {
      table: "nat",
      chain: "MY-PORTAL",
      rule: "-A MY-PORTAL -d 10.96.0.0/12 -j KUBE-SERVICES",
      target: "KUBE-SERVICES",
    },
  ]);
});

t.test("ipvs-mode leftovers next to kubelet's chains", async (t) => {
  const r = parseIptablesSave(read("nftables-ipvs-leftovers", "iptables-nft-save.txt"), "nft", "ipv4");
  if (!r.ok) return t.fail(r.error);
  const byOwner: Record<string, string[]> = {};
  for (const c of r.value.kubeChains) (byOwner[c.owner] ??= []).push(`${c.table}/${c.name}`);
  t.same(byOwner["kube-proxy-ipvs"], [
    "filter/KUBE-IPVS-FILTER",
    "filter/KUBE-IPVS-OUT-FILTER",
    "filter/KUBE-NODE-PORT",
    "filter/KUBE-SOURCE-RANGES-FIREWALL",
    "nat/KUBE-LOAD-BALANCER",
    "nat/KUBE-NODE-PORT",
  ]);
  t.notOk(
    r.value.kubeChains.some((c) => c.name === "KUBE-PROXY-CANARY"),
    "ipvs mode has no canary",
  );
  t.same(r.value.patternCounts, {});
  t.same(r.value.foreignJumps, []);
});

t.test("legacy backend: an old ipvs mode's nat KUBE-FIREWALL, and a ufw-like host firewall", async (t) => {
  const old = parseIptablesSave(read("ipvs-legacy-leftovers", "iptables-legacy-save.txt"), "legacy", "ipv4");
  if (!old.ok) return t.fail(old.error);
  t.same(
    old.value.kubeChains.find((c) => c.table === "nat" && c.name === "KUBE-FIREWALL")?.owner,
    "kube-proxy-ipvs",
  );
  t.same(
    old.value.kubeChains.find((c) => c.table === "filter" && c.name === "KUBE-FIREWALL")?.owner,
    "kubelet",
  );
  const ufw = parseIptablesSave(read("host-firewall", "iptables-legacy-save.txt"), "legacy", "ipv4");
  if (!ufw.ok) return t.fail(ufw.error);
  t.same(ufw.value.policies, { "filter/INPUT": "DROP", "filter/FORWARD": "DROP", "filter/OUTPUT": "ACCEPT" });
  t.same(ufw.value.firewallChains, { "ufw-after-input": 0, "ufw-before-input": 3, "ufw-user-input": 1 });
  t.equal(ufw.value.totalRules, 6);
});

t.test("owner catalogue corner cases", async (t) => {
  t.equal(chainOwner("nat", "KUBE-NODE-PORT"), "kube-proxy-ipvs");
  t.equal(chainOwner("nat", "KUBE-NODEPORTS"), "kube-proxy-iptables");
  t.equal(chainOwner("nat", "KUBE-FIREWALL"), "kube-proxy-ipvs");
  t.equal(chainOwner("filter", "KUBE-FIREWALL"), "kubelet");
  t.equal(chainOwner("nat", "KUBE-XLB-ABCDEF"), "kube-proxy-iptables");
  t.equal(chainOwner("filter", "KUBE-SOMETHING-ELSE"), "unknown");
});

t.test("empty output is an empty ruleset; truncated and garbage input are errors", async (t) => {
  const empty = parseIptablesSave("", "nft", "ipv4");
  t.same(empty.ok && [empty.value.totalRules, empty.value.kubeChains, empty.value.policies], [0, [], {}]);
  const full = read("iptables-mode", "iptables-nft-save.txt");
  const cut = full.slice(0, full.indexOf("COMMIT", full.indexOf("*nat")));
  const r = parseIptablesSave(cut, "nft", "ipv4");
  t.equal(r.ok, false);
  t.match(!r.ok && r.error, /ends inside table \*nat/);
  const midLine = full.slice(0, full.indexOf('"ns1/svc1:p80 cluster IP"') + 5);
  t.equal(parseIptablesSave(midLine, "nft", "ipv4").ok, false);
  for (const bad of [
    "hello\n",
    "*filter\n-A\nCOMMIT\n",
    "*filter\nnonsense\nCOMMIT\n",
    "-A INPUT -j ACCEPT\n",
    "*filter\n*nat\n",
  ]) {
    t.equal(parseIptablesSave(bad, "legacy", "ipv4").ok, false, JSON.stringify(bad));
  }
});

t.test("upstream's exact rule text, nfacct matches included, parses the same", async (t) => {
  // Lines from pkg/proxy/iptables/proxier_test.go TestOverallIPTablesRules that cannot be loaded into
  // a fresh namespace (no nfacct objects), in iptables-save -c form.
  const text = [
    "*filter",
    ":INPUT ACCEPT [0:0]",
    ":KUBE-FORWARD - [0:0]",
    "[7:420] -A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP",
    '[9:540] -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT',
    "COMMIT",
  ].join("\n");
  const r = parseIptablesSave(text, "legacy", "ipv4");
  if (!r.ok) return t.fail(r.error);
  t.same(r.value.kubeChains, [{ table: "filter", name: "KUBE-FORWARD", rules: 2, owner: "kube-proxy" }]);
  t.same(
    r.value.nodePortAccepts.map((a) => [a.packets, a.bytes]),
    [[9, 540]],
  );
});

t.test(
  "comments with a newline: one rule over several lines, as the real iptables-legacy-save prints it",
  async (t) => {
    // recorded/odd-comments (record.sh): kube-proxy's ipvs-mode rules and OUTPUT rules whose comments
    // hold newlines, "COMMIT" and "*filter" on lines of their own, a quote, a backslash, a tab.
    const text = read("odd-comments", "iptables-legacy-save.txt");
    const comments: (string | null)[] = [];
    const chains: string[] = [];
    const { IptablesSaveReader } = await import("../../../agent/parse/iptables-save-lines.js");
    const reader = new IptablesSaveReader({
      chain: (table, name) => chains.push(`${table}/${name}`),
      rule: (r) => {
        if (r.chain === "OUTPUT" && r.table === "filter") comments.push(r.comment);
      },
    });
    for (const l of text.split("\n")) reader.feed(l);
    t.equal(reader.finish(), null, "the real output is iptables-save output");
    t.same(comments, [
      "kubernetes ipvs access filter",
      "a\nb",
      "x\nCOMMIT\n*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j DROP",
      'q"uote \\\\back',
      "tab\there",
      "\n",
    ]);
    t.notOk(chains.includes("filter/INPUT") && chains.filter((c) => c === "filter/INPUT").length > 1);
    const r = parseIptablesSave(text, "legacy", "ipv4");
    if (!r.ok) return t.fail(r.error);
    t.ok(
      r.value.kubeChains.some((c) => c.table === "filter" && c.name === "KUBE-IPVS-FILTER" && c.rules === 6),
      "kube-proxy's KUBE-IPVS-FILTER is seen, with its 6 rules",
    );
    const cut = text.slice(0, text.indexOf('"x\n') + 3);
    const bad = parseIptablesSave(cut, "legacy", "ipv4");
    t.match(
      bad.ok ? "" : bad.error,
      /ends inside a quoted string/,
      "output cut inside a comment is not output",
    );
  },
);

// kube-router's KUBE-* chains and sets are not kube-proxy's; a foreign rule matching
// kube-proxy's ipset is a reference. Recorded from kube-router/Flannel/Docker rulesets built from their source.
t.test("kube-router's chains and sets are nobody's references; a match on kube-proxy's set is", async (t) => {
  const r = parseIptablesSave(read("k3s-kube-router", "iptables-nft-save.txt"), "nft", "ipv4");
  if (!r.ok) return t.fail(r.error);
  t.same(
    r.value.foreignJumps,
    [],
    "FORWARD -> KUBE-ROUTER-FORWARD, KUBE-POD-FW-* -> KUBE-NWPLCY-*: not kube-proxy's",
  );
  t.same(
    r.value.foreignSetMatches,
    [
      {
        table: "filter",
        chain: "MY-ALLOW",
        rule: "-A MY-ALLOW -p tcp -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT",
        set: "KUBE-CLUSTER-IP",
      },
    ],
    "kube-router's --match-set KUBE-SRC-*/KUBE-DST-* and kube-proxy's own matches are not listed",
  );
  const router = r.value.kubeChains.filter((c) => /^KUBE-(ROUTER|NWPLCY|POD-FW)-/.test(c.name));
  t.equal(router.length, 8);
  t.ok(router.every((c) => c.owner === "unknown"));
  t.same(r.value.dockerChains, [
    "DOCKER",
    "DOCKER-BRIDGE",
    "DOCKER-CT",
    "DOCKER-FORWARD",
    "DOCKER-INTERNAL",
    "DOCKER-USER",
  ]);
  t.equal(r.value.policies["filter/FORWARD"], "DROP");
  t.same(r.value.firewallChains, {}, "Docker's and Flannel's chains are not host-firewall chains");
});

// The network plugin's FORWARD accepts decide whether forwarded Service traffic passes a FORWARD DROP
// after the switch (forward-drop-at-switch): FORWARD's jumps are listed in its order, once each.
t.test("FORWARD's jumps are listed, in order, once each", async (t) => {
  const r = parseIptablesSave(read("k3s-kube-router", "iptables-nft-save.txt"), "nft", "ipv4");
  if (!r.ok) return t.fail(r.error);
  t.ok(r.value.forwardJumps?.includes("FLANNEL-FWD"), "Flannel's accepts are seen");
  t.ok(r.value.forwardJumps?.includes("KUBE-ROUTER-FORWARD"), "kube-router's are seen");
  t.ok(r.value.forwardJumps?.includes("DOCKER-USER"), "Docker's are seen");
  t.equal(new Set(r.value.forwardJumps).size, r.value.forwardJumps?.length);
  const none = parseIptablesSave(
    "*filter\n:FORWARD ACCEPT [0:0]\n-A OTHER -j FLANNEL-FWD\nCOMMIT\n",
    "nft",
    "ipv4",
  );
  t.same(none.ok ? none.value.forwardJumps : null, [], "a jump from another chain is not FORWARD's");
});

// Rules matching IPVS state stop matching at the switch (ipvs-match-rules-stop-applying); kube-proxy's own
// (KUBE-IPVS-OUT-FILTER, pkg/proxy/ipvs/proxier.go v1.34.4) go with its mode and are not listed.
t.test("-m ipvs rules outside kube-proxy's chains are listed", async (t) => {
  const text = [
    "*filter",
    ":INPUT ACCEPT [0:0]",
    ":KUBE-IPVS-OUT-FILTER - [0:0]",
    "-A INPUT -m ipvs --ipvs --vdir ORIGINAL -j ACCEPT",
    "-A KUBE-IPVS-OUT-FILTER -s 1.2.3.4/32 -m ipvs --vaddr 1.2.3.4/32 --vproto 6 --vport 80 -j DROP",
    '-A INPUT -m comment --comment "-m ipvs" -j ACCEPT',
    "COMMIT",
    "",
  ].join("\n");
  const r = parseIptablesSave(text, "legacy", "ipv4");
  if (!r.ok) return t.fail(r.error);
  t.same(r.value.ipvsMatches, [
    { table: "filter", chain: "INPUT", rule: "-A INPUT -m ipvs --ipvs --vdir ORIGINAL -j ACCEPT" },
  ]);
});

t.test("an unconditional FORWARD accept is told from a conditional one", async (t) => {
  const text = [
    "*filter",
    ":FORWARD DROP [0:0]",
    "-A FORWARD -i docker0 -j ACCEPT",
    '-A FORWARD -m comment --comment "open it all" -j ACCEPT',
    "COMMIT",
    "",
  ].join("\n");
  const r = parseIptablesSave(text, "legacy", "ipv4");
  t.same(r.ok ? r.value.forwardJumps : null, ["ACCEPT", "ACCEPT (every packet)"]);
});

t.test("-m ipvs rules past the listing cap are counted, not lost", async (t) => {
  const rules = Array.from(
    { length: 250 },
    (_, i) => `-A POSTROUTING -m ipvs --vaddr 10.96.0.${i % 250}/32 -j SNAT --to-source 10.0.0.1`,
  );
  const text = `*nat\n:POSTROUTING ACCEPT [0:0]\n${rules.join("\n")}\nCOMMIT\n`;
  const r = parseIptablesSave(text, "nft", "ipv4");
  if (!r.ok) throw new Error(r.error);
  t.equal(r.value.ipvsMatches?.length, 200, "the list is cut");
  t.equal(r.value.ipvsMatchCount, 250, "the count is whole");
});
