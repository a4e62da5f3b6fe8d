import t from "tap";
import { ids, judge, NOW } from "../../../helpers/rules.js";
import { emptyFacts, metrics, noKernelState } from "../../../helpers/facts.js";
import type { NodeFacts } from "../../../../agent/report/schema.js";

// nftables mode programs `table ip kube-proxy` and `table ip6 kube-proxy` on every node
// (cmd/kube-proxy/app/server_linux.go assumes both families for nftables mode; test/profiles
// upstream-facts.md §c). A missing family is named, not only the case where both are missing.
const table = (family: "ip" | "ip6") => ({
  family,
  name: "kube-proxy",
  sets: [],
  chains: { total: 10, service: 1, endpoint: 1, external: 0, base: [] },
});
const node = (...families: ("ip" | "ip6")[]): NodeFacts =>
  emptyFacts({
    ...noKernelState,
    proxyMode: { mode: "nftables" },
    kubeProxyMetrics: metrics({ kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 5 }),
    nftables: {
      tables: families.map((family) => ({ family, name: "kube-proxy", owner: "kube-proxy" })),
      kubeProxyTableName: "kube-proxy",
      kubeProxy: families.map(table),
      firewalls: [],
    },
  });

t.test("both tables present: nothing missing", async (t) => {
  t.notOk(ids(judge(node("ip", "ip6"), new Map(), NOW)).includes("nftables-table-missing"));
});

t.test("only the ip6 table is missing: named, a warning", async (t) => {
  const j = judge(node("ip"), new Map(), NOW);
  const f = j.findings.find((x) => x.id === "nftables-table-missing");
  t.same(f?.evidence.missingFamilies, ["ip6"]);
  t.match(f?.title, /table ip6 kube-proxy/);
  t.equal(f?.severity, "warning");
});

t.test("the ip table is missing: critical, and says which", async (t) => {
  const j = judge(node("ip6"), new Map(), NOW);
  const f = j.findings.find((x) => x.id === "nftables-table-missing");
  t.same(f?.evidence.missingFamilies, ["ip"]);
  t.equal(f?.severity, "critical");
  t.equal(j.verdict, "unhealthy");
});

t.test("both missing: critical, both named", async (t) => {
  const f = judge(node(), new Map(), NOW).findings.find((x) => x.id === "nftables-table-missing");
  t.same(f?.evidence.missingFamilies, ["ip", "ip6"]);
  t.equal(f?.severity, "critical");
});
