import t from "tap";
import { ipvsNode } from "../../helpers/rules.js";
import { emptyFacts } from "../../helpers/facts.js";
import { readCounter } from "../../../agent/view/counters.js";

t.test("counters: not applicable in the wrong mode, absent failure counter is zero", async (t) => {
  const f = ipvsNode();
  t.same(
    readCounter(f, "ipvs", "kubeproxy_iptables_localhost_nodeports_accepted_packets_total").state,
    "not-applicable",
  );
  t.same(readCounter(f, "nftables", "kubeproxy_sync_proxy_rules_nftables_sync_failures_total"), {
    state: "absent-means-zero",
  });
  t.same(
    readCounter(emptyFacts(), "nftables", "kubeproxy_sync_proxy_rules_nftables_sync_failures_total").state,
    "unknown",
  );
});
