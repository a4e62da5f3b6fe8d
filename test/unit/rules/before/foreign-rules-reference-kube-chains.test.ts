import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { iptablesBackend } from "../../../helpers/facts.js";

t.test("a rule of someone else's that jumps into a KUBE-* chain is told", async (t) => {
  const jump = {
    table: "filter",
    chain: "INPUT",
    target: "KUBE-FIREWALL-X",
    rule: "-A INPUT -j KUBE-FIREWALL-X",
  };
  const j = judge(
    ipvsNode({ iptables: { backends: [iptablesBackend({ foreignJumps: [jump] })] } }),
    new Map(),
    NOW,
  );
  t.ok(ids(j).includes("foreign-rules-reference-kube-chains"));
  t.notOk(
    ids(judge(ipvsNode({ iptables: { backends: [iptablesBackend()] } }), new Map(), NOW)).includes(
      "foreign-rules-reference-kube-chains",
    ),
  );
});

// A foreign rule matching kube-proxy's ipset by name breaks like a jump when nftables mode
// destroys the set; the parser lists only kube-proxy's exact names (kube-router's KUBE-SRC-* never).
t.test("a foreign match on kube-proxy's ipset is told, beside the jumps", async (t) => {
  const m = {
    table: "filter",
    chain: "MY-ALLOW",
    rule: "-A MY-ALLOW -p tcp -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT",
    set: "KUBE-CLUSTER-IP",
  };
  const j = judge(
    ipvsNode({ iptables: { backends: [iptablesBackend({ foreignSetMatches: [m] })] } }),
    new Map(),
    NOW,
  );
  const x = j.findings.find((f) => f.id === "foreign-rules-reference-kube-chains");
  t.same(x?.evidence.setMatches, [
    "ipv4 nft filter/MY-ALLOW matches ipset KUBE-CLUSTER-IP: -A MY-ALLOW -p tcp -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT",
  ]);
  t.equal(x?.evidence.count, 1);
  t.match(x?.title, /1 match kube-proxy's ipsets/);
  const old = judge(
    ipvsNode({ iptables: { backends: [iptablesBackend({ foreignSetMatches: undefined })] } }),
    new Map(),
    NOW,
  );
  t.notOk(
    ids(old).includes("foreign-rules-reference-kube-chains"),
    "an older agent's report without the list",
  );
});
