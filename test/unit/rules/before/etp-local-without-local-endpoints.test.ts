import t from "tap";
import { ids, ipvsNode, judge, NOW } from "../../../helpers/rules.js";
import { metrics } from "../../../helpers/facts.js";

const g = "kubeproxy_sync_proxy_rules_no_local_endpoints_total";
const m = (n: number) => metrics({ [g]: n, kubeproxy_sync_proxy_rules_last_timestamp_seconds: NOW - 10 });

t.test("Services with a Local policy and no local endpoint, in ipvs mode, are told", async (t) => {
  t.ok(
    ids(judge(ipvsNode({ kubeProxyMetrics: m(2) }), new Map(), NOW)).includes(
      "etp-local-without-local-endpoints",
    ),
  );
  t.notOk(
    ids(judge(ipvsNode({ kubeProxyMetrics: m(0) }), new Map(), NOW)).includes(
      "etp-local-without-local-endpoints",
    ),
  );
});

// ipvs falls back for internalTrafficPolicy: Local as well as externalTrafficPolicy: Local.
t.test(
  "the evidence splits internal and external; internal alone is named, not called external",
  async (t) => {
    const split = (internal: number, external: number) => {
      const km = m(internal + external);
      km.metrics[g]!.byLabel = { traffic_policy: { internal, external } };
      return judge(ipvsNode({ kubeProxyMetrics: km }), new Map(), NOW).findings.find(
        (f) => f.id === "etp-local-without-local-endpoints",
      );
    };
    const itp = split(3, 0);
    t.equal(itp?.evidence.internalTrafficPolicyLocal, 3);
    t.equal(itp?.evidence.externalTrafficPolicyLocal, 0);
    t.match(itp?.title, /\(internal\)/);
    t.notMatch(itp?.title, /external/);
    t.match(itp?.remedy, /internalTrafficPolicy/);
    const both = split(1, 2);
    t.match(both?.title, /\(internal and external\)/);
    t.equal(split(0, 0), undefined);
    // Unsplit (an older report): both named, the counts said to be unsplit rather than 0.
    t.match(
      judge(ipvsNode({ kubeProxyMetrics: m(2) }), new Map(), NOW).findings.find(
        (f) => f.id === "etp-local-without-local-endpoints",
      )?.evidence.internalTrafficPolicyLocal,
      /not split/,
    );
  },
);
