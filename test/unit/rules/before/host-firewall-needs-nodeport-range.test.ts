import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { iptablesBackend } from "../../../helpers/facts.js";

t.test("an INPUT policy DROP before the switch is told; ACCEPT is not", async (t) => {
  const drop = judge(
    ipvsNode({ iptables: { backends: [iptablesBackend({ policies: { "filter/INPUT": "DROP" } })] } }),
    new Map(),
    NOW,
  );
  t.ok(ids(drop).includes("host-firewall-needs-nodeport-range"));
  const accept = judge(
    ipvsNode({ iptables: { backends: [iptablesBackend({ policies: { "filter/INPUT": "ACCEPT" } })] } }),
    new Map(),
    NOW,
  );
  t.notOk(ids(accept).includes("host-firewall-needs-nodeport-range"));
});
