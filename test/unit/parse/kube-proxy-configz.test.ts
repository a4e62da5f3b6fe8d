import t from "tap";
import { readFileSync } from "node:fs";
import { parseConfigz } from "../../../agent/parse/kube-proxy-configz.js";

const recorded = (s: string) =>
  readFileSync(new URL(`../../fixtures/kube-proxy/recorded/${s}/configz.json`, import.meta.url), "utf8");

t.test("v1.31 internal config (Go field names): ipvs block, gates, timeouts", async (t) => {
  const r = parseConfigz(recorded("ipvs-v1.31"));
  t.same(r, {
    ok: true,
    value: {
      mode: "ipvs",
      nodePortAddresses: [],
      featureGates: { KubeProxyDrainingTerminatingNodes: true },
      ipvs: {
        scheduler: "lc",
        strictARP: true,
        tcpTimeout: "15m0s",
        tcpFinTimeout: null,
        udpTimeout: null,
        excludeCIDRs: ["192.0.2.0/24"],
      },
      nftablesTableName: null,
      conntrackTcpBeLiberal: false,
      metricsBindAddress: "127.0.0.1:10249",
      healthzBindAddress: "0.0.0.0:10256",
      detectLocalMode: "ClusterCIDR",
      clusterCIDR: "10.244.0.0/16",
    },
  });
});

t.test(
  "v1.33 internal config: an empty mode was defaulted to iptables; dual-stack cluster CIDRs",
  async (t) => {
    const r = parseConfigz(recorded("iptables-default-v1.33"));
    t.ok(r.ok);
    if (!r.ok) return;
    t.equal(r.value.mode, "iptables");
    t.equal(r.value.clusterCIDR, "10.244.0.0/16,fd00:10:244::/56");
    t.same(r.value.featureGates, {}, "FeatureGates null is no gates");
  },
);

t.test("v1.33 nftables: 'primary' was rewritten into the node's CIDR on the served config", async (t) => {
  const r = parseConfigz(recorded("nftables-draining-v1.33"));
  t.ok(r.ok && r.value.mode === "nftables");
  if (r.ok) t.same(r.value.nodePortAddresses, ["192.0.2.10/32"]);
});

t.test("v1.37 versioned config (v1alpha1 json keys, kind/apiVersion)", async (t) => {
  const text = recorded("nftables-failing-v1.37");
  t.match(JSON.parse(text)["kubeproxy.config.k8s.io"], { kind: "KubeProxyConfiguration" });
  const r = parseConfigz(text);
  t.ok(r.ok);
  if (!r.ok) return;
  t.equal(r.value.mode, "nftables");
  t.same(r.value.nodePortAddresses, ["primary", "localhost"]);
  t.same(r.value.featureGates, { KubeProxyNFTablesLocalhostNodePorts: true });
  t.equal(r.value.ipvs.scheduler, "");
  t.equal(r.value.nftablesTableName, null, "no such field upstream");
  t.equal(r.value.conntrackTcpBeLiberal, false);
  t.equal(r.value.clusterCIDR, "10.244.0.0/16");
});

t.test("older internal layout: top-level Conntrack and ClusterCIDR, Mode left empty", async (t) => {
  // Shape of pkg/proxy/apis/config/types.go before the Linux/Windows split (PR #126072).
  const body = JSON.stringify({
    "kubeproxy.config.k8s.io": {
      FeatureGates: { SomeGate: false },
      Mode: "",
      IPVS: { SyncPeriod: "30s", Scheduler: "rr", ExcludeCIDRs: null, StrictARP: false, TCPTimeout: "0s" },
      Conntrack: { TCPBeLiberal: true },
      ClusterCIDR: "10.0.0.0/8",
      NodePortAddresses: ["10.1.0.0/16"],
    },
  });
  const r = parseConfigz(body);
  t.ok(r.ok);
  if (!r.ok) return;
  t.equal(r.value.mode, "");
  t.equal(r.value.conntrackTcpBeLiberal, true);
  t.equal(r.value.clusterCIDR, "10.0.0.0/8");
  t.same(r.value.nodePortAddresses, ["10.1.0.0/16"]);
  t.equal(r.value.ipvs.tcpTimeout, null);
  t.equal(r.value.metricsBindAddress, null);
});

t.test("a future nftables.tableName is read when present", async (t) => {
  const r = parseConfigz(
    JSON.stringify({ "kubeproxy.config.k8s.io": { mode: "nftables", nftables: { tableName: "kp" } } }),
  );
  t.ok(r.ok && r.value.nftablesTableName === "kp");
});

t.test("garbage: not JSON, wrong key, null entry, wrong types", async (t) => {
  const cases: [string, RegExp][] = [
    ["<html>", /not JSON/],
    ["[]", /not a JSON object/],
    ['{"componentconfig":{}}', /no kubeproxy\.config\.k8s\.io/],
    ['{"kubeproxy.config.k8s.io":null}', /is null/],
    ['{"kubeproxy.config.k8s.io":{"IPVS":{}}}', /no string Mode/],
    ['{"kubeproxy.config.k8s.io":{"mode":"ipvs","ipvs":{"tcpTimeout":900000000000}}}', /not a Go duration/],
    ['{"kubeproxy.config.k8s.io":{"mode":"ipvs","nodePortAddresses":"primary"}}', /not a list of strings/],
    ['{"kubeproxy.config.k8s.io":{"mode":"ipvs","featureGates":{"A":"true"}}}', /map of booleans/],
  ];
  for (const [body, why] of cases) {
    const r = parseConfigz(body);
    t.equal(r.ok, false, body);
    if (!r.ok) t.match(r.error, why, body);
  }
});
