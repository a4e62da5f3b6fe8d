import t from "tap";
import { ids, judge, kernel, NOW } from "../../../helpers/rules.js";
import { configz, emptyFacts, metrics, noKernelState } from "../../../helpers/facts.js";

t.test("iptables mode: localhost NodePorts and conntrack counters", async (t) => {
  const f = emptyFacts({
    ...noKernelState,
    kernel: kernel("5.15.0-100-generic"),
    proxyMode: { mode: "iptables" },
    configz: configz({ mode: "iptables" }),
    kubeProxyMetrics: metrics({
      kubeproxy_iptables_localhost_nodeports_accepted_packets_total: 41822,
      kubeproxy_iptables_ct_state_invalid_dropped_packets_total: 12,
      kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5,
    }),
  });
  const j = judge(f, new Map(), NOW);
  t.same(ids(j), ["conntrack-workaround-relied-on", "localhost-nodeports-in-use"]);
  t.equal(j.verdict, "attention");
});
