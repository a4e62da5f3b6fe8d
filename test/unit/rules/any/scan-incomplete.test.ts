import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { emptyFacts, metrics, noKernelState, refused } from "../../../helpers/facts.js";

t.test("a failed kernel-state probe: never clean or ready", async (t) => {
  const nftablesNode = emptyFacts({
    ...noKernelState,
    nftables: null,
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5 }),
  });
  const nftFailed = new Map([["nftables", { kind: "not-permitted" as const, message: "nft exited 1" }]]);
  const j = judge(nftablesNode, nftFailed, NOW);
  t.same(ids(j), ["scan-incomplete"]);
  t.equal(j.verdict, "unknown");
  const ipvs = judge(
    ipvsNode({ iptables: null }),
    new Map([["iptables", { kind: "timeout" as const, message: "slow" }]]),
    NOW,
  );
  t.equal(ipvs.verdict, "attention");
  t.ok(ids(ipvs).includes("scan-incomplete"));
  // kube-proxy not answering on a kube-proxy-free node is the answer, not a hole in the scan.
  const free = judge(
    emptyFacts(noKernelState),
    new Map([
      ["kube-proxy-mode", refused],
      ["kube-proxy-metrics", refused],
    ]),
    NOW,
  );
  t.equal(free.verdict, "clean");
  t.same(ids(free), ["kube-proxy-free"]);
});
