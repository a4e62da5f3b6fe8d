import t from "tap";
import { ids, judge, NOW } from "../../../helpers/rules.js";
import { configz, emptyFacts, iptablesBackend, metrics, noKernelState } from "../../../helpers/facts.js";

t.test("nftables node: leftovers without harm -> leftovers; kubelet chains are not leftovers", async (t) => {
  const base = {
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    configz: configz({ mode: "nftables" }),
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5 }),
    nftables: {
      // Both families, as nftables mode programs them on every node.
      tables: (["ip", "ip6"] as const).map((family) => ({ family, name: "kube-proxy", owner: "kube-proxy" })),
      kubeProxyTableName: "kube-proxy",
      kubeProxy: (["ip", "ip6"] as const).map((family) => ({
        family,
        name: "kube-proxy",
        sets: [],
        chains: { total: 10, service: 2, endpoint: 2, external: 0, base: [] },
      })),
      firewalls: [],
    },
  };
  const kubeletOnly = emptyFacts({
    ...base,
    iptables: {
      backends: [
        iptablesBackend({
          totalRules: 3,
          kubeChains: [
            { table: "filter", name: "KUBE-FIREWALL", rules: 1, owner: "kubelet" },
            { table: "mangle", name: "KUBE-KUBELET-CANARY", rules: 0, owner: "kubelet" },
          ],
        }),
      ],
    },
  });
  const clean = judge(kubeletOnly, new Map(), NOW);
  t.equal(clean.verdict, "clean");
  t.same(ids(clean), []);
  const left = emptyFacts({
    ...base,
    ipsets: {
      sets: [
        {
          name: "KUBE-6-CLUSTER-IP",
          type: "hash:ip,port",
          family: "inet6",
          entries: 3,
          references: 0,
          kubeProxy: true,
        },
      ],
    },
  });
  const j = judge(left, new Map(), NOW);
  t.equal(j.verdict, "leftovers");
  t.same(ids(j), ["kube-ipsets-left"]);
  t.equal(j.findings[0]!.evidence.ipv6Sets, 1);
});

// The remedy names kube-proxy's sets exactly; `grep '^KUBE-'` would destroy kube-router's
// in-use KUBE-SRC-*/KUBE-DST-* sets on every k3s node.
t.test("the remedy destroys kube-proxy's sets by name, never every KUBE-* set", async (t) => {
  const set = (name: string, kubeProxy: boolean) => ({
    name,
    type: "hash:ip",
    family: "inet" as const,
    entries: 1,
    references: 0,
    kubeProxy,
  });
  const f = emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    configz: configz({ mode: "nftables" }),
    ipsets: {
      sets: [set("KUBE-CLUSTER-IP", true), set("KUBE-SRC-J2JLXWMHRQG4ZLAD", false), set("KUBE-DST-X", false)],
    },
  });
  const x = judge(f, new Map(), NOW).findings.find((y) => y.id === "kube-ipsets-left");
  t.same(x?.evidence.sets, ["KUBE-CLUSTER-IP (hash:ip, 1 entries)"]);
  t.match(x?.remedy, /^for s in 'KUBE-CLUSTER-IP'; do ipset destroy "\$s"; done/);
  t.notMatch(x?.remedy, /grep|KUBE-SRC-J2|KUBE-DST-X/);
});

// In iptables mode kube-proxy never runs ipvs mode's cleanup (cmd/kube-proxy/app/server_linux.go
// platformCleanup: `if !isIPTablesBased(mode) || cleanupAndExit`, and iptables is iptables-based), so
// every set is left, IPv4 and IPv6 alike: the title must not blame the IPv4-only cleanup of the switch
// to nftables mode.
t.test("after ipvs -> iptables, the title says iptables mode cleans none of them", async (t) => {
  const set = (name: string, family: "inet" | "inet6") => ({
    name,
    type: "hash:ip,port",
    family,
    entries: 0,
    references: 0,
    kubeProxy: true,
  });
  const facts = (mode: "iptables" | "nftables") =>
    emptyFacts({
      ...noKernelState,
      proxyMode: { mode },
      configz: configz({ mode }),
      ipsets: { sets: [set("KUBE-CLUSTER-IP", "inet"), set("KUBE-6-CLUSTER-IP", "inet6")] },
    });
  const title = (mode: "iptables" | "nftables") =>
    judge(facts(mode), new Map(), NOW).findings.find((y) => y.id === "kube-ipsets-left")?.title;
  t.match(
    title("iptables"),
    /^2 kube-proxy ipsets are left \(iptables mode never cleans up ipvs mode's sets\)$/,
  );
  t.match(title("nftables"), /\(1 IPv6: kube-proxy's own cleanup only destroys the IPv4 ones\)$/);
});
