// The network plugin beside kube-proxy in nftables mode: a plugin version known to break blocks, one
// whose support is unknown or needs its own setting warns, one its project calls supported says
// nothing; DaemonSets that were not read are "not read", never "no plugin".
import { readFileSync } from "node:fs";
import t from "tap";
import { clusterChecks } from "../../../../collector/rules/index.js";
import type { ApiDaemonSet, ClusterFacts } from "../../../../collector/report/cluster-facts.js";
import {
  CNI_COMPATIBILITY,
  compatRow,
  pluginImage,
  versionOfTag,
} from "../../../../collector/checks/cni-compatibility.js";
import { cfg, facts } from "../../../helpers/fleet.js";

const ID = "cluster-network-plugin-nftables-support";
const ds = (namespace: string, name: string, images: string[], runServiceProxy: boolean | null = null) =>
  ({ namespace, name, images, runServiceProxy }) satisfies ApiDaemonSet;
const withPlugins = (items: ApiDaemonSet[], mode = "ipvs", more = false): ClusterFacts =>
  facts({ daemonSets: { items, more } }, cfg({ mode }));
const finding = (f: ClusterFacts, observed: { node: string; phase: string }[] = []) =>
  clusterChecks(f, observed).find((x) => x.id === ID);

const CALICO_OLD = "docker.io/calico/node:v3.27.0";
const CILIUM =
  "quay.io/cilium/cilium:v1.15.1@sha256:351d6685dc6f6ffbcd5451043167cfa8842c6decf80d8c8e426a417c73fb56d4";
const FLANNEL = "ghcr.io/flannel-io/flannel:v0.24.2";
const AWS = "602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni:v1.18.1-eksbuild.1";
const AZURE = "mcr.microsoft.com/containernetworking/azure-cns:v1.6.13";

t.test("images: the plugin and its version, from real image strings", async (t) => {
  t.match(pluginImage(CALICO_OLD), { plugin: "calico", tag: "v3.27.0", version: "v3.27.0" });
  t.match(pluginImage("quay.io/calico/node:v3.30.2"), { plugin: "calico", version: "v3.30.2" });
  t.match(pluginImage(CILIUM), { plugin: "cilium", tag: "v1.15.1", version: "v1.15.1" });
  t.match(pluginImage(FLANNEL), { plugin: "flannel", version: "v0.24.2" });
  t.match(pluginImage("docker.io/rancher/mirrored-flannelcni-flannel:v0.25.1"), { plugin: "flannel" });
  t.match(pluginImage(AWS), { plugin: "aws-vpc-cni", version: "v1.18.1" });
  t.match(pluginImage(AZURE), { plugin: "azure-cni", version: "v1.6.13" });
  t.match(pluginImage("docker.io/cloudnativelabs/kube-router:v2.6.1"), { plugin: "kube-router" });
  t.match(pluginImage("quay.io/cilium/cilium@sha256:351d66"), { plugin: "cilium", tag: null, version: null });
  t.equal(pluginImage("registry.k8s.io/kube-proxy:v1.34.4"), null);
  t.equal(pluginImage("docker.io/library/node:22"), null, "a node.js image is not calico/node");
  t.match(pluginImage("registry.example:5000/calico/node"), { plugin: "calico", tag: null, version: null });
  t.equal(versionOfTag("latest"), null);
  t.equal(versionOfTag("master-amd64"), null);
});

t.test("the table: every row has a source, and each plugin's rows do not overlap", async (t) => {
  for (const r of CNI_COMPATIBILITY)
    t.ok(r.source.length > 10, `${r.plugin} ${r.from}..${r.until} has a source`);
  t.equal(compatRow("calico", "v3.28.9")?.support, "breaks");
  t.equal(compatRow("calico", "v3.29.0")?.support, "needs-config");
  t.equal(compatRow("aws-vpc-cni", "v1.13.1")?.support, "unknown");
  t.equal(compatRow("aws-vpc-cni", "v1.13.2")?.support, "works");
  t.equal(compatRow("calico", null), null, "a plugin whose rows differ by version is not judged without one");
  t.equal(compatRow("cilium", null)?.support, "unknown");
});

t.test(
  "a Calico version known to break: error, blocks, names DaemonSet, image, version and source",
  async (t) => {
    const f = finding(
      withPlugins([ds("kube-system", "calico-node", [CALICO_OLD, "docker.io/calico/cni:v3.27.0"])]),
    );
    t.equal(f?.severity, "error");
    t.equal(f?.stage, "before");
    t.equal(f?.blocksMigration, true);
    t.match(f?.title, /Calico v3\.27\.0/);
    const line = (f?.evidence.plugins as string[])[0];
    t.match(line, /kube-system\/calico-node/);
    t.match(line, /docker\.io\/calico\/node:v3\.27\.0/);
    t.match(line, /projectcalico\/calico#8025/);
    t.match(f?.remedy, /v3\.29\.0/);
  },
);

t.test("after the switch the same Calico is an error too, stage after", async (t) => {
  const f = finding(withPlugins([ds("kube-system", "calico-node", [CALICO_OLD])], "nftables"));
  t.equal(f?.severity, "error");
  t.equal(f?.stage, "after");
  const canary = finding(withPlugins([ds("kube-system", "calico-node", [CALICO_OLD])]), [
    { node: "a", phase: "nftables" },
  ]);
  t.equal(canary?.stage, "after", "a node already in nftables mode has the plugin beside it now");
});

t.test("unknown or config-dependent support: warning, not blocking", async (t) => {
  for (const [name, image] of [
    ["cilium", CILIUM],
    ["kube-flannel-ds", FLANNEL],
    ["azure-cns", AZURE],
    ["calico-node", "quay.io/calico/node:v3.31.3"],
  ] as const) {
    const f = finding(withPlugins([ds("kube-system", name, [image])]));
    t.equal(f?.severity, "warning", name);
    t.equal(f?.blocksMigration, false, name);
    t.match((f?.evidence.plugins as string[])[0], image.split("@")[0]!, name);
  }
});

t.test("a tag that names no version: warning, the image named", async (t) => {
  const f = finding(withPlugins([ds("calico-system", "calico-node", ["quay.io/calico/node:master"])]));
  t.equal(f?.severity, "warning");
  t.match((f?.evidence.plugins as string[])[0], /version not known/);
});

t.test("kube-router with its own service proxy: warning that says so", async (t) => {
  const on = finding(
    withPlugins([ds("kube-system", "kube-router", ["docker.io/cloudnativelabs/kube-router:v2.6.1"])]),
  );
  t.equal(on?.severity, "warning");
  t.match((on?.evidence.plugins as string[])[0], /service proxy/);
  const off = finding(
    withPlugins([ds("kube-system", "kube-router", ["docker.io/cloudnativelabs/kube-router:v2.6.1"], false)]),
  );
  t.notMatch((off?.evidence.plugins as string[])[0], /service proxy/);
});

t.test("known good: nothing said", async (t) => {
  t.equal(finding(withPlugins([ds("kube-system", "aws-node", [AWS])])), undefined);
});

t.test("the worst plugin decides; every plugin is listed", async (t) => {
  const f = finding(
    withPlugins([ds("kube-system", "aws-node", [AWS]), ds("kube-system", "calico-node", [CALICO_OLD])]),
  );
  t.equal(f?.severity, "error");
  t.equal((f?.evidence.plugins as string[]).length, 2);
});

t.test("no plugin among the DaemonSets read: nothing; a cut list: warning", async (t) => {
  t.equal(
    finding(withPlugins([ds("monitoring", "node-exporter", ["quay.io/prometheus/node-exporter:v1.8.2"])])),
    undefined,
  );
  const cut = finding(withPlugins([], "ipvs", true));
  t.equal(cut?.severity, "warning");
  t.match(cut?.title, /not all DaemonSets/);
});

t.test("DaemonSets not read: warning that says not read, with the API's reason", async (t) => {
  const f = finding(
    facts(
      {
        daemonSets: null,
        gaps: [{ what: "daemonsets (all namespaces)", reason: "HTTP 403: daemonsets.apps is forbidden" }],
      },
      cfg({ mode: "ipvs" }),
    ),
  );
  t.equal(f?.severity, "warning");
  t.match(f?.title, /not read/);
  t.match(f?.evidence.reason, /403/);
  t.notMatch(f?.title, /no network plugin/i);
});

t.test("no kube-proxy at all: the switch does not concern the cluster", async (t) => {
  const f = withPlugins([ds("kube-system", "calico-node", [CALICO_OLD])]);
  const none = {
    ...f,
    kubeProxyDaemonSet: null,
    kubeProxyConfigMap: null,
    staticKubeProxy: { pods: [], more: false },
  };
  t.equal(finding(none), undefined);
});

t.test("the finding's page prints the table: every row's versions, support and source", async (t) => {
  const page = readFileSync(
    new URL("../../../../docs/findings/cluster-network-plugin-nftables-support.md", import.meta.url),
    "utf8",
  );
  for (const r of CNI_COMPATIBILITY) {
    const row = page.split("\n").find((l) => l.includes(r.source));
    t.ok(row, `${r.plugin} ${r.from ?? ""}..${r.until ?? ""}: its source is on the page`);
    t.match(row, `| ${r.support} |`, `${r.plugin}: the page says ${r.support}`);
    for (const v of [r.from, r.until]) if (v !== null) t.match(row, v, `${r.plugin}: ${v} on the page`);
  }
});
