import t from "tap";
import { ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { iptablesBackend } from "../../../helpers/facts.js";
import type { NodeFacts } from "../../../../agent/report/schema.js";
import type { IptablesBackendRead } from "../../../../agent/facts/netfilter.js";

// A rule matching IPVS state (`-m ipvs`, iptables-extensions(8)) matches only packets IPVS handled; after
// the switch no packet is, so the rule silently stops applying. kube-proxy's own (KUBE-IPVS-OUT-FILTER) go
// with its mode. Expected per profile (test/profiles/profiles.md): no corpus profile has a third-party
// `-m ipvs` rule on a kube-proxy ipvs node -> silent everywhere (kube-router's proxy has one, on a node
// where kube-proxy does not run ipvs: silent there too). A node with one: a warning (`attention`), the
// rules listed: someone must rewrite them (by Service address and port, or on kube-proxy's nftables state).
const RULE = "-A POSTROUTING -m ipvs --ipvs --vdir ORIGINAL --vmethod MASQ -j SNAT --to-source 10.0.0.1";
// kube-proxy's own KUBE-IPVS-FILTER, as every current ipvs node has it (else another finding speaks).
const IPVS_FILTER = {
  table: "filter",
  name: "KUBE-IPVS-FILTER",
  rules: 6,
  owner: "kube-proxy-ipvs" as const,
};
const node = (ipvsMatches: IptablesBackendRead["ipvsMatches"]) =>
  ipvsNode({ iptables: { backends: [iptablesBackend({ ipvsMatches, kubeChains: [IPVS_FILTER] })] } });
const finding = (f: NodeFacts) =>
  judge(f, new Map(), NOW).findings.find((x) => x.id === "ipvs-match-rules-stop-applying");

t.test("a third-party -m ipvs rule: a warning before the switch, listed", async (t) => {
  const j = judge(node([{ table: "nat", chain: "POSTROUTING", rule: RULE }]), new Map(), NOW);
  const f = j.findings.find((x) => x.id === "ipvs-match-rules-stop-applying");
  t.equal(f?.severity, "warning");
  t.equal(f?.stage, "before");
  t.same(f?.evidence.rules, [`ipv4 nft nat/POSTROUTING: ${RULE}`]);
  t.equal(f?.evidence.count, 1);
  t.equal(j.verdict, "attention");
});

t.test("none: silent and ready", async (t) => {
  const j = judge(node([]), new Map(), NOW);
  t.notOk(j.findings.some((x) => x.id === "ipvs-match-rules-stop-applying"));
  t.equal(j.verdict, "ready");
});

t.test("an older agent's backend did not look: said, never taken for none", async (t) => {
  t.match(finding(node(undefined))?.evidence.notRead, ["ipv4 nft"]);
});

t.test("only kube-proxy's own answer says ipvs mode runs", async (t) => {
  const f = node([{ table: "nat", chain: "POSTROUTING", rule: RULE }]);
  t.notOk(finding({ ...f, proxyMode: null }));
  t.notOk(finding({ ...f, proxyMode: { mode: "nftables" } }));
});

t.test("the count is every rule the parser saw, not the length of its cut list", async (t) => {
  const f = ipvsNode({
    iptables: {
      backends: [
        iptablesBackend({
          ipvsMatches: [{ table: "nat", chain: "POSTROUTING", rule: RULE }],
          ipvsMatchCount: 250,
        }),
      ],
    },
  });
  t.equal(finding(f)?.evidence.count, 250);
});
