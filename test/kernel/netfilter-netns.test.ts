import t from "tap";
import { staleBuild } from "../helpers/built.js";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseIptablesSave } from "../../agent/parse/iptables-save.js";
import { parseNftChains, parseNftSets, parseNftTables } from "../../agent/parse/nft-json.js";
import { nftablesFacts } from "../../agent/parse/nftables-facts.js";
import { netnsAvailable, withNetns, type NetNs } from "../helpers/netns.js";

// Loads each scenario into a fresh namespace with the real tools, runs the real probes there
// (dist/, plain node), and asserts they report exactly what the parsers make of the recorded
// fixtures of the same scenario (whose contents the unit tests pin down literally).
const root = new URL("../../", import.meta.url);
const src = (f: string) => readFileSync(new URL(`test/fixtures/netfilter/sources/${f}`, root), "utf8");
const rec = (s: string, f: string) =>
  readFileSync(new URL(`test/fixtures/netfilter/recorded/${s}/${f}`, root), "utf8");
const recExists = (s: string, f: string) =>
  existsSync(new URL(`test/fixtures/netfilter/recorded/${s}/${f}`, root));

if (!netnsAvailable()) {
  t.fail("cannot create network namespaces here (needs root); this test does not skip silently");
} else {
  const stale = staleBuild(["agent/probes/nftables.ts", "agent/probes/iptables.ts"]);
  t.equal(stale, null, "dist/ is built and current");

  const kubelet = (ns: NetNs, backend: "nft" | "legacy") => {
    ns.iptablesRestore(src("kubelet.rules"), backend, "ipv4");
    ns.iptablesRestore(src("kubelet6.rules"), backend, "ipv6");
  };
  const v134 = (ns: NetNs) => {
    kubelet(ns, "nft");
    ns.loadNft(src("kube-proxy-nft-v1.34-ip.nft"));
  };
  const iptablesMode = (ns: NetNs) => {
    kubelet(ns, "nft");
    ns.iptablesRestore(src("kube-proxy-iptables-mode.rules"), "nft", "ipv4");
  };
  // Same steps as record.sh, minus the loopback SYNs (so packet counters stay 0 here).
  const SCENARIOS: Record<string, (ns: NetNs) => void> = {
    empty: () => {},
    "nftables-v1.34": v134,
    "nftables-pre1.34-dualstack": (ns) => {
      kubelet(ns, "nft");
      ns.loadNft(src("kube-proxy-nft-v1.31-ip.nft"));
      ns.loadNft(src("kube-proxy-nft-v1.33-ip6.nft"));
    },
    "nftables-ipvs-leftovers": (ns) => {
      v134(ns);
      ns.ipsetRestore(src("ipvs-mode.ipset"));
      ns.iptablesRestore(src("kube-proxy-ipvs-mode.rules"), "nft", "ipv4");
    },
    "iptables-mode": iptablesMode,
    firewalld: (ns) => {
      v134(ns);
      ns.loadNft(src("firewalld-like.nft"));
    },
    "host-firewall": (ns) => {
      v134(ns);
      ns.loadNft(src("host-firewall.nft"));
      ns.iptablesRestore(src("ufw-like.rules"), "legacy", "ipv4");
    },
    "foreign-jump": (ns) => {
      iptablesMode(ns);
      ns.iptablesRestore(src("foreign-jump.rules"), "nft", "ipv4");
    },
    "ipvs-legacy-leftovers": (ns) => {
      kubelet(ns, "legacy");
      ns.iptablesRestore(src("kube-proxy-ipvs-mode-pre130.rules"), "legacy", "ipv4");
      ns.loadNft(src("kube-proxy-nft-v1.34-ip.nft"));
    },
    "odd-comments": (ns) => {
      ns.ipsetRestore(src("ipvs-mode.ipset"));
      ns.iptablesRestore(src("kube-proxy-ipvs-mode.rules"), "legacy", "ipv4");
      for (const c of [
        "a\nb",
        "x\nCOMMIT\n*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j DROP",
        'q"uote \\\\back',
        "tab\there",
        "\n",
      ])
        ns.must(["iptables-legacy", "-A", "OUTPUT", "-m", "comment", "--comment", c, "-j", "ACCEPT"]);
    },
    "k3s-kube-router": (ns) => {
      ns.ipsetRestore(src("ipvs-mode.ipset"));
      ns.ipsetRestore(src("kube-router-netpol.ipset"));
      for (const f of [
        "kubelet",
        "kube-proxy-ipvs-mode",
        "kube-router-netpol",
        "flannel",
        "docker",
        "foreign-set-match",
      ])
        ns.iptablesRestore(src(`${f}.rules`), "nft", "ipv4");
    },
  };

  const zeroCounters = <T extends { nodePortAccepts: { packets: number; bytes: number }[] }>(f: T): T => ({
    ...f,
    nodePortAccepts: f.nodePortAccepts.map((a) => ({ ...a, packets: 0, bytes: 0 })),
  });

  function expectedFromFixtures(s: string) {
    const backends = (
      [
        ["iptables-legacy-save.txt", "legacy", "ipv4"],
        ["ip6tables-legacy-save.txt", "legacy", "ipv6"],
        ["iptables-nft-save.txt", "nft", "ipv4"],
        ["ip6tables-nft-save.txt", "nft", "ipv6"],
      ] as const
    ).map(([f, b, fam]) => {
      const p = parseIptablesSave(rec(s, f), b, fam);
      if (!p.ok) throw new Error(p.error);
      return zeroCounters(p.value);
    });
    const tables = parseNftTables(rec(s, "nft-list-tables.json"));
    const chains = parseNftChains(rec(s, "nft-list-chains.json"));
    if (!tables.ok || !chains.ok) throw new Error("fixture");
    const sets = ["ip", "ip6"].flatMap((fam) =>
      ["sets", "maps"].flatMap((w) => {
        const f = `nft-list-${w}-${fam}.json`;
        if (!recExists(s, f)) return [];
        const p = parseNftSets(rec(s, f));
        return p.ok ? p.value : [];
      }),
    );
    return {
      backends,
      nftables: nftablesFacts({ tables: tables.value, chains: chains.value, sets }, "kube-proxy"),
    };
  }

  // The iptables probe asks the kernel's table list before running iptables-legacy-save (an empty or
  // absent list: no table, and the tool is not run). What that rests on, on this kernel: a fresh
  // namespace lists no table even with ip_tables loaded, the first legacy rule makes its table appear,
  // and the next probe reads it.
  t.test("legacy tables appear in the kernel's list on first use, and the probe follows", async (t) => {
    await withNetns(async (ns) => {
      const names = () => ns.exec(["cat", "/proc/net/ip_tables_names"]);
      const probe = () => {
        const run = ns.runNode(fileURLToPath(new URL("test/kernel/netfilter-driver.mjs", root)));
        t.equal(run.code, 0, run.stderr);
        const out = JSON.parse(run.stdout) as {
          iptables: {
            ok: boolean;
            facts: {
              backends: {
                backend: string;
                family: string;
                read: boolean;
                totalRules?: number;
                kubeChains?: { name: string }[];
              }[];
            };
          };
        };
        return out.iptables.facts.backends.find((b) => b.backend === "legacy" && b.family === "ipv4");
      };
      const before = names();
      t.equal(before.code === 0 ? before.stdout.trim() : "", "", "a fresh namespace lists no legacy table");
      // The equivalence the skip rests on: with nothing listed the tools print no table, and asking them
      // makes none.
      for (const tool of ["iptables-legacy-save", "ip6tables-legacy-save"]) {
        const saved = ns.exec([tool]);
        t.notMatch(saved.stdout, /^\*/m, `${tool} prints no table when none is listed`);
      }
      t.equal(names().stdout.trim(), "", "and running them made none");
      t.match(probe(), { read: true, totalRules: 0, kubeChains: [] });
      ns.must(["iptables-legacy", "-t", "nat", "-N", "KUBE-MARK-MASQ"]);
      t.match(names(), { code: 0, stdout: /^nat$/m }, "the first rule made the nat table");
      t.match(probe(), { read: true, kubeChains: [{ name: "KUBE-MARK-MASQ" }] }, "and the probe reads it");
    });
  });

  for (const [name, load] of Object.entries(SCENARIOS)) {
    t.test(name, async (t) => {
      await withNetns(async (ns) => {
        load(ns);
        const run = ns.runNode(fileURLToPath(new URL("test/kernel/netfilter-driver.mjs", root)));
        t.equal(run.code, 0, run.stderr);
        const out = JSON.parse(run.stdout) as {
          iptables: { ok: boolean; facts: { backends: Parameters<typeof zeroCounters>[0][] } };
          nftables: { ok: boolean; facts: unknown };
        };
        const want = expectedFromFixtures(name);
        t.ok(out.iptables.ok && out.nftables.ok);
        t.same(out.iptables.facts.backends.map(zeroCounters), want.backends);
        t.same(out.nftables.facts, want.nftables);
      });
    });
  }
}
