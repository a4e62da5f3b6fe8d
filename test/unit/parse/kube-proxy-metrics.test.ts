import t from "tap";
import { readFileSync } from "node:fs";
import { parseKubeProxyMetrics } from "../../../agent/parse/kube-proxy-metrics.js";
import {
  KUBE_PROXY_METRICS,
  minorOf,
  readCounter,
} from "../../../agent/parse/kube-proxy-metrics-catalogue.js";
import type { KubeProxyMetricsFacts } from "../../../agent/facts/kube-proxy.js";
import { KubeProxyMetricsFacts as Schema } from "../../../agent/facts/kube-proxy.js";

const recorded = (s: string) =>
  readFileSync(new URL(`../../fixtures/kube-proxy/recorded/${s}/metrics.txt`, import.meta.url), "utf8");

function facts(s: string): KubeProxyMetricsFacts {
  const r = parseKubeProxyMetrics(recorded(s));
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

t.test("recorded v1.37 nftables: failure counters summed, build version, schema-valid", async (t) => {
  const f = facts("nftables-failing-v1.37");
  t.ok(Schema.safeParse(f).success);
  t.equal(f.gitVersion, "v1.37.0");
  t.same(f.metrics.kubeproxy_sync_proxy_rules_nftables_sync_failures_total, {
    type: "counter",
    value: 42,
    series: 1,
    min: 42,
    max: 42,
  });
  t.same(f.metrics.kubeproxy_nftables_localhost_nodeport_rejected_packets_total, {
    type: "counter",
    value: 5,
    series: 3,
    min: 0,
    max: 5,
  });
  t.equal(f.metrics.kubeproxy_sync_proxy_rules_duration_seconds_count?.type, "histogram");
  t.notOk("kubernetes_build_info" in f.metrics, "only kubeproxy_* families are kept");
  t.notOk(
    "kubeproxy_sync_proxy_rules_iptables_restore_failures_total" in f.metrics,
    "not registered in nftables mode",
  );
});

t.test("recorded v1.33 dual-stack iptables: per-family gauges sum over both families", async (t) => {
  const f = facts("iptables-default-v1.33");
  t.equal(f.metrics.kubeproxy_iptables_localhost_nodeports_accepted_packets_total?.value, 41822);
  t.equal(f.metrics.kubeproxy_iptables_ct_state_invalid_dropped_packets_total?.value, 17);
  t.equal(f.metrics.kubeproxy_sync_proxy_rules_last_timestamp_seconds?.series, 2);
  t.equal(f.metrics.kubeproxy_sync_proxy_rules_iptables_total?.series, 4, "2 families x 2 tables");
});

t.test("readCounter: absent labeled failure counter is zero from v1.33, missing before", async (t) => {
  const healthy = facts("iptables-default-v1.33");
  const name = "kubeproxy_sync_proxy_rules_iptables_restore_failures_total";
  t.notOk(name in healthy.metrics, "a healthy v1.33 node does not export it");
  t.same(readCounter(healthy, name, "iptables"), { state: "absent-means-zero" });
  const old = facts("ipvs-v1.31");
  t.same(readCounter(old, name, "ipvs"), { state: "value", value: 0 }, "unlabeled counters are always there");
  const stripped = { ...old, metrics: { ...old.metrics } };
  delete stripped.metrics[name];
  t.same(readCounter(stripped, name, "ipvs"), { state: "missing" }, "before v1.33 absence is not zero");
});

t.test("readCounter: a counter of another mode is not applicable, never 0", async (t) => {
  const ipvs = facts("ipvs-v1.31");
  t.same(readCounter(ipvs, "kubeproxy_iptables_localhost_nodeports_accepted_packets_total", "ipvs"), {
    state: "not-applicable",
  });
  t.same(readCounter(ipvs, "kubeproxy_sync_proxy_rules_nftables_sync_failures_total", "ipvs"), {
    state: "not-applicable",
  });
  const nft = facts("nftables-failing-v1.37");
  t.same(readCounter(nft, "kubeproxy_iptables_ct_state_invalid_dropped_packets_total", "nftables"), {
    state: "not-applicable",
  });
  t.same(readCounter(nft, "kubeproxy_sync_proxy_rules_nftables_sync_failures_total", "nftables"), {
    state: "value",
    value: 42,
  });
});

t.test("readCounter: a custom (kernel-read) counter's absence is missing, not zero", async (t) => {
  const f = facts("iptables-default-v1.33");
  const n = "kubeproxy_iptables_ct_state_invalid_dropped_packets_total";
  const without = { ...f, metrics: { ...f.metrics } };
  delete without.metrics[n];
  t.same(readCounter(without, n, "iptables"), { state: "missing" });
  t.same(readCounter(f, n, "iptables"), { state: "value", value: 17 });
});

t.test("readCounter: version gates and the empty mode", async (t) => {
  const empty: KubeProxyMetricsFacts = { metrics: {}, gitVersion: "v1.30.2", familyCount: 1 };
  t.same(readCounter(empty, "kubeproxy_iptables_localhost_nodeports_accepted_packets_total", "iptables"), {
    state: "not-applicable",
  });
  t.same(readCounter(empty, "kubeproxy_nftables_localhost_nodeport_rejected_packets_total", "nftables"), {
    state: "not-applicable",
  });
  t.same(readCounter(empty, "kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total", ""), {
    state: "missing",
  });
  const unknownVersion = { ...empty, gitVersion: null };
  t.same(
    readCounter(unknownVersion, "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total", "nftables"),
    {
      state: "absent-means-zero",
    },
  );
  t.same(
    readCounter(unknownVersion, "kubeproxy_sync_proxy_rules_last_timestamp_seconds", "nftables"),
    {
      state: "missing",
    },
    "a gauge's absence is never a zero",
  );
  t.same(readCounter(unknownVersion, "some_unknown_metric", "nftables"), { state: "missing" });
  t.same(readCounter(empty, "kubeproxy_sync_proxy_rules_nftables_sync_failures_total", "kernelspace"), {
    state: "not-applicable",
  });
});

t.test(
  "catalogue: every entry is exported by the stand-in in its modes (names and types agree)",
  async (t) => {
    const byMode = {
      iptables: facts("iptables-default-v1.33"),
      ipvs: facts("ipvs-v1.31"),
      nftables: facts("nftables-failing-v1.37"),
    };
    for (const [name, e] of Object.entries(KUBE_PROXY_METRICS)) {
      for (const mode of ["iptables", "ipvs", "nftables"] as const) {
        const f = byMode[mode];
        const key = e.type === "histogram" ? `${name}_count` : name;
        const m = f.metrics[key];
        if (!e.modes.includes(mode)) t.notOk(m, `${name} absent in ${mode}`);
        else if (m) t.equal(m.type, e.type, `${name} type`);
      }
    }
    t.equal(minorOf("v1.33.1"), 33);
    t.equal(minorOf("v1.37.0-alpha.1+abc"), 37);
    t.equal(minorOf("garbage"), null);
  },
);

t.test("garbage and empty answers are typed errors", async (t) => {
  for (const bad of ["<html>502</html>", "", "kubeproxy_x 1\nkubeproxy_y"]) {
    t.equal(parseKubeProxyMetrics(bad).ok, false, JSON.stringify(bad));
  }
});

t.test("NaN/Inf sums are left out rather than reported as numbers", async (t) => {
  const r = parseKubeProxyMetrics("# TYPE kubeproxy_g gauge\nkubeproxy_g NaN\nkubeproxy_h 1\n");
  t.ok(r.ok);
  if (r.ok) {
    t.notOk("kubeproxy_g" in r.value.metrics);
    t.equal(r.value.metrics.kubeproxy_h?.value, 1);
    t.ok(Schema.safeParse(r.value).success);
  }
});

// The no-local-endpoints gauge is read per traffic_policy, so ITP Local is not called ETP.
t.test("no_local_endpoints is split by traffic_policy (internal, external)", async (t) => {
  const g = "kubeproxy_sync_proxy_rules_no_local_endpoints_total";
  t.same(facts("ipvs-v1.31").metrics[g]?.byLabel, { traffic_policy: { internal: 0, external: 0 } });
  const text = recorded("ipvs-v1.31").replace(
    `${g}{traffic_policy="internal"} 0`,
    `${g}{traffic_policy="internal"} 3`,
  );
  const r = parseKubeProxyMetrics(text);
  t.ok(r.ok);
  if (!r.ok) return;
  t.same(r.value.metrics[g]?.byLabel, { traffic_policy: { internal: 3, external: 0 } });
  t.equal(r.value.metrics[g]?.value, 3);
  t.ok(Schema.safeParse(r.value).success);
  // Per IP family from v1.33: summed over families, still split by policy.
  t.same(facts("nftables-draining-v1.33").metrics[g]?.byLabel?.traffic_policy, { internal: 0, external: 0 });
  t.equal(
    facts("ipvs-v1.31").metrics["kubeproxy_sync_proxy_rules_last_timestamp_seconds"]?.byLabel,
    undefined,
  );
});
