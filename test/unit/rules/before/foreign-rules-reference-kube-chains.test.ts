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
