// Where kube-proxy's mode comes from: --config followed to the volume and the
// ConfigMap it mounts, static pods, the distribution; and the rule that only a source read and found
// empty is "not pinned". Objects are the recorded shapes in test/fixtures/kubernetes/ (README there).
import { readFileSync } from "node:fs";
import type { V1DaemonSet, V1Pod, V1Volume } from "@kubernetes/client-node";
import t from "tap";
import { clusterChecks } from "../../../collector/rules/index.js";
import { configSource } from "../../../collector/checks/config-source.js";
import { detectDistribution } from "../../../collector/checks/distribution.js";
import { configMountOf } from "../../../collector/parse/kube-proxy-config.js";
import { plan } from "../../../collector/plan/plan.js";
import type { ClusterFacts } from "../../../collector/report/cluster-facts.js";
import {
  toKubeProxyConfigMap,
  toKubeProxyDaemonSet,
  toMirrorPod,
} from "../../../collector/sources/kubernetes/index.js";
import { apiNode, cfg, facts, hostFileFacts } from "../../helpers/fleet.js";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const fixture = (name: string): Json =>
  JSON.parse(readFileSync(new URL(`../../fixtures/kubernetes/${name}`, import.meta.url), "utf8")) as Json;
const ds = (name: string) => toKubeProxyDaemonSet(fixture(name) as V1DaemonSet);
const mirror = (name: string, node: string) =>
  toMirrorPod(JSON.parse(JSON.stringify(fixture(name)).replaceAll("NODE", node)) as V1Pod);
const ids = (f: ClusterFacts, observed: Parameters<typeof clusterChecks>[1] = []) =>
  clusterChecks(f, observed).map((x) => x.id);
const step1 = (f: ClusterFacts) => plan(f, [], clusterChecks(f, []))[0]!;

t.test("--config is followed through the mount to the ConfigMap and key", async (t) => {
  t.match(ds("kube-proxy-daemonset.kubeadm.json").configMount, {
    kind: "configmap",
    configMap: "kube-proxy",
    key: "config.conf",
  });
  // EKS mounts two ConfigMaps; /var/lib/kube-proxy/ is not a parent of /var/lib/kube-proxy-config/.
  t.same(ds("kube-proxy-daemonset.eks.json").configMount, {
    kind: "configmap",
    path: "/var/lib/kube-proxy-config/config",
    volume: "config",
    configMap: "kube-proxy-config",
    key: "config",
  });
  // Talos names its ConfigMap after the config's checksum.
  t.match(ds("kube-proxy-daemonset.talos-config.json").configMount, {
    configMap: "kube-proxy-config-abc123",
    key: "config.conf",
  });
  t.equal(ds("kube-proxy-daemonset.talos-flags.json").configMount, null, "no --config: nothing to follow");
});

// A pod's volume as the API gives it: configMountOf reads only configMap and projected, and names any other.
const hostPath = (name: string, path: string): V1Volume => ({ name, hostPath: { path } });

t.test("--config in args, as two words; subPath, items, projected, hostPath, no mount", async (t) => {
  const raw = fixture("kube-proxy-daemonset.eks.json");
  const c = raw.spec.template.spec.containers[0];
  c.args = ["--config", "/var/lib/kube-proxy-config/config"];
  c.command = ["kube-proxy", "--v=2"];
  t.match(toKubeProxyDaemonSet(raw as V1DaemonSet).configMount, {
    configMap: "kube-proxy-config",
    key: "config",
  });

  const cm = (items?: { key: string; path: string }[]) => [{ name: "v", configMap: { name: "cm", items } }];
  t.match(
    configMountOf("/etc/kp/kp.yaml", [{ name: "v", mountPath: "/etc/kp/kp.yaml", subPath: "conf" }], cm()),
    {
      kind: "configmap",
      key: "conf",
    },
  );
  t.match(
    configMountOf(
      "/etc/kp/kp.yaml",
      [{ name: "v", mountPath: "/etc/kp" }],
      cm([{ key: "real", path: "kp.yaml" }]),
    ),
    {
      kind: "configmap",
      key: "real",
    },
  );
  t.match(
    configMountOf(
      "/etc/kp/kp.yaml",
      [{ name: "v", mountPath: "/etc/kp" }],
      cm([{ key: "x", path: "other" }]),
    ),
    {
      kind: "other-volume",
    },
  );
  t.match(
    configMountOf(
      "/etc/kp/kp.yaml",
      [{ name: "v", mountPath: "/etc/kp" }],
      [{ name: "v", projected: { sources: [{ configMap: { name: "pcm" } }] } }],
    ),
    { kind: "configmap", configMap: "pcm", key: "kp.yaml" },
  );
  t.same(
    configMountOf("/etc/kp/kp.yaml", [{ name: "h", mountPath: "/etc/kp/" }], [hostPath("h", "/etc/kp")]),
    { kind: "other-volume", path: "/etc/kp/kp.yaml", volume: "h", source: "hostPath" },
  );
  t.same(configMountOf("/etc/kp/kp.yaml", [{ name: "x", mountPath: "/var" }], []), {
    kind: "unmounted",
    path: "/etc/kp/kp.yaml",
  });
  // The deepest mount wins over its parent.
  t.match(
    configMountOf(
      "/var/lib/a/b/c.conf",
      [
        { name: "outer", mountPath: "/var/lib/a" },
        { name: "inner", mountPath: "/var/lib/a/b" },
      ],
      [hostPath("outer", "/x"), { name: "inner", configMap: { name: "in" } }],
    ),
    { kind: "configmap", configMap: "in", key: "c.conf" },
  );
});

t.test("the mounted key is the config: a missing key is named, not taken for an empty mode", async (t) => {
  const eks = fixture("kube-proxy-config.eks-ipvs.json");
  t.match(toKubeProxyConfigMap(eks as never, "config"), {
    key: "config",
    via: "daemonset-mount",
    config: { mode: "ipvs" },
  });
  t.match(toKubeProxyConfigMap(fixture("kube-proxy-configmap.eks-kubeconfig.json") as never, "config"), {
    config: null,
    parseError: /no key config/,
  });
});

t.test("the distribution, from what the API shows", async (t) => {
  const withNodes = (...nodes: ReturnType<typeof apiNode>[]) => facts({ nodes });
  const k3s = { ...apiNode("a"), kubeletVersion: "v1.34.2+k3s1", providerID: "k3s://a" };
  t.match(detectDistribution(withNodes(k3s)), { name: "k3s", cloud: "k3s" });
  t.match(detectDistribution(withNodes({ ...apiNode("a"), kubeletVersion: "v1.36.1+rke2r1" })), {
    name: "rke2",
  });
  t.match(detectDistribution(facts({ kubeProxyDaemonSet: ds("kube-proxy-daemonset.eks.json") })), {
    name: "eks",
    evidence: [/eks\.amazonaws\.com\/component/],
  });
  t.match(detectDistribution(withNodes(apiNode("a", undefined, { "kops.k8s.io/instancegroup": "nodes" }))), {
    name: "kops",
  });
  t.match(detectDistribution(withNodes({ ...apiNode("a"), osImage: "Talos (v1.14.0)" })), { name: "talos" });
  t.match(
    detectDistribution(withNodes(apiNode("a", undefined, { "kubernetes.azure.com/agentpool": "np1" }))),
    {
      name: "aks",
    },
  );
  t.match(detectDistribution(withNodes(apiNode("a", undefined, { "cloud.google.com/gke-nodepool": "p" }))), {
    name: "gke",
  });
  t.match(detectDistribution(facts({ kubeadm: true })), { name: "kubeadm" });
  // A providerID names the cloud, never the distribution: kOps and EKS both run on aws://.
  t.match(detectDistribution(withNodes({ ...apiNode("a"), providerID: "aws:///eu-central-1a/i-0abc" })), {
    name: "unknown",
    cloud: "aws",
  });
});

t.test(
  "kOps: static pods with no --proxy-mode are really not pinned, fixed in the cluster spec",
  async (t) => {
    const f = facts({
      kubeProxyDaemonSet: null,
      kubeProxyConfigMap: null,
      staticKubeProxy: {
        pods: [
          mirror("kube-proxy-mirror-pod.kops.template.json", "a"),
          mirror("kube-proxy-mirror-pod.kops.template.json", "b"),
        ],
        more: false,
      },
    });
    t.match(configSource(f), { kind: "static-pod", pin: "not-pinned", distribution: "kops", mirrorPods: 2 });
    const pin = clusterChecks(f, []).find((x) => x.id === "cluster-proxy-mode-not-pinned");
    t.match(pin?.remedy, /kops edit cluster: spec\.kubeProxy\.proxyMode: nftables/);
    t.notOk(ids(f).includes("cluster-no-kube-proxy"));
    t.match(step1(f), { status: "todo", detail: /^Not pinned: kube-proxy's defaults: its static pods/ });
    t.notMatch(step1(f).detail, /mode: is empty/, "there is no mode: key to be empty");
  },
);

t.test("Talos: --proxy-mode on the DaemonSet pins it; a ConfigMap RBAC cannot name is unread", async (t) => {
  const flags = facts({
    kubeProxyDaemonSet: ds("kube-proxy-daemonset.talos-flags.json"),
    kubeProxyConfigMap: null,
  });
  flags.nodes = [{ ...apiNode("a"), osImage: "Talos (v1.14.0)" }];
  t.match(configSource(flags), { kind: "flags", pin: "pinned", mode: "iptables", distribution: "talos" });
  t.match(
    clusterChecks(flags, []).find((x) => x.id === "cluster-config-source")?.remedy,
    /cluster\.proxy\.mode: nftables/,
  );
  const forbidden = facts({
    kubeProxyDaemonSet: ds("kube-proxy-daemonset.talos-config.json"),
    kubeProxyConfigMap: null,
    gaps: [{ what: "configmap kube-system/kube-proxy-config-abc123", reason: "HTTP 403: forbidden" }],
  });
  t.match(configSource(forbidden), {
    kind: "configmap",
    pin: "unknown",
    read: false,
    configMap: "kube-proxy-config-abc123",
  });
  t.notOk(ids(forbidden, [{ node: "a", phase: "nftables" }]).includes("cluster-proxy-mode-not-pinned"));
  t.notOk(ids(forbidden, [{ node: "a", phase: "nftables" }]).includes("cluster-nodes-disagree-with-config"));
  t.match(step1(forbidden), { status: "todo", detail: /could not be read/ });
  const read = facts({
    kubeProxyDaemonSet: ds("kube-proxy-daemonset.talos-config.json"),
    kubeProxyConfigMap: toKubeProxyConfigMap(
      fixture("kube-proxy-configmap.talos.json") as never,
      "config.conf",
    ),
  });
  t.match(configSource(read), { pin: "pinned", mode: "nftables", configMap: "kube-proxy-config-abc123" });
});

t.test("a --config file outside any ConfigMap is not read, so neither pinned nor empty", async (t) => {
  const f = hostFileFacts();
  t.match(configSource(f), { kind: "file", pin: "unknown" });
  const found = ids(f, [{ node: "a", phase: "nftables" }]);
  t.notOk(found.includes("cluster-proxy-mode-not-pinned"));
  t.notOk(found.includes("cluster-nodes-disagree-with-config"), "expects nothing it did not read");
  t.match(step1(f), {
    status: "todo",
    detail: /^Unknown: the file --config=\/etc\/kube-proxy\/config\.yaml, from volume host \(hostPath\)/,
  });
});

t.test("k3s: the nodes decide; kube-proxy disabled is no kube-proxy, silence is not", async (t) => {
  const k3s = (n: string) => ({ ...apiNode(n), kubeletVersion: "v1.34.2+k3s1" });
  const f = facts({
    kubeProxyDaemonSet: null,
    kubeProxyConfigMap: null,
    nodes: [k3s("a"), k3s("b"), k3s("c")],
  });
  const observed = [
    { node: "a", phase: "ipvs" },
    { node: "b", phase: "ipvs", inferred: true },
    { node: "c", phase: "iptables", inferred: false },
  ];
  t.match(
    configSource(f, observed),
    {
      kind: "distribution",
      pin: "distribution",
      nodesAnswered: ["iptables=1", "ipvs=1"],
    },
    "a guessed phase is not an answer",
  );
  t.notOk(ids(f, observed).includes("cluster-no-kube-proxy"));
  t.notOk(ids(f, []).includes("cluster-no-kube-proxy"), "no node answered: unknown, not absent");
  t.ok(ids(f, [{ node: "a", phase: "none" }]).includes("cluster-no-kube-proxy"), "--disable-kube-proxy");
  t.match(step1(f), { status: "done", detail: /^Pinned by k3s: .*\/etc\/rancher\/k3s\/config\.yaml/ });
});

t.test("EKS not pinned: the remedy is the add-on's configuration values", async (t) => {
  const f = facts({
    kubeProxyDaemonSet: ds("kube-proxy-daemonset.eks.json"),
    kubeProxyConfigMap: toKubeProxyConfigMap(
      {
        metadata: { name: "kube-proxy-config" },
        data: { config: 'kind: KubeProxyConfiguration\nmode: ""\n' },
      } as never,
      "config",
    ),
  });
  const pin = clusterChecks(f, []).find((x) => x.id === "cluster-proxy-mode-not-pinned");
  t.match(
    pin?.remedy,
    /aws eks update-addon --cluster-name CLUSTER --addon-name kube-proxy --configuration-values '\{"mode":"nftables"\}'/,
  );
  t.match(
    pin?.remedy,
    /kubectl -n kube-system edit configmap kube-proxy-config \(mode: "nftables" in key config\)/,
  );
  t.match(step1(f).detail, /^mode: is empty in ConfigMap kube-system\/kube-proxy-config, key config/);
});

t.test("kubeadm's cluster stays as it was: ConfigMap kube-proxy, config.conf", async (t) => {
  t.match(configSource(facts({ kubeadm: true }, cfg({ mode: "ipvs" }))), {
    kind: "configmap",
    pin: "pinned",
    mode: "ipvs",
    configMap: "kube-proxy",
    key: "config.conf",
    distribution: "kubeadm",
  });
  t.ok(ids(facts()).includes("cluster-proxy-mode-not-pinned"), "an empty mode: read is still the finding");
});

t.test("no DaemonSet and the static pods could not be listed: unknown, not absent", async (t) => {
  const f = facts({
    kubeProxyDaemonSet: null,
    kubeProxyConfigMap: null,
    gaps: [{ what: "pods kube-system (kube-proxy static pods)", reason: "HTTP 403: forbidden" }],
  });
  t.match(configSource(f), { kind: "unknown", pin: "unknown", where: /not read \(pods kube-system/ });
  t.notOk(ids(f).includes("cluster-no-kube-proxy"));
  t.notOk(ids(f).includes("cluster-proxy-mode-not-pinned"));
  t.match(step1(f), { status: "todo", detail: /could not be read/ });
});

// kube-proxy ignores its flags when --config is given: Complete() replaces the flag-built config by the
// file's, keeping only the logging flags (and --hostname-override, processed after) —
// kubernetes v1.34.4 cmd/kube-proxy/app/options.go. So beside --config, --proxy-mode says nothing about the
// mode: the ConfigMap's mode: is what runs, and the flag only misleads whoever reads the DaemonSet.
t.test("--proxy-mode beside --config is ignored by kube-proxy: the ConfigMap's mode runs", async (t) => {
  const kubeadm = ds("kube-proxy-daemonset.kubeadm.json");
  const f = facts(
    {
      kubeProxyDaemonSet: { ...kubeadm, proxyModeFlag: "iptables" },
      kubeProxyConfigMap: toKubeProxyConfigMap(fixture("kube-proxy-configmap.kubeadm-ipvs.json") as never),
    },
    null,
  );
  const src = configSource(f);
  t.equal(src.kind, "configmap", "the mounted ConfigMap is the source");
  t.equal(src.mode, "ipvs", "its mode: runs, not the ignored flag's");
  t.match(src.where, /--proxy-mode=iptables .*ignored/);
  const d = clusterChecks(f, []).find((x) => x.id === "cluster-config-sources-disagree");
  t.match(d?.title, /ignores --proxy-mode=iptables/);
  t.match(d?.title, /mode: ipvs/);
  t.match(d?.remedy, /[Dd]rop --proxy-mode/);
});

t.test("--proxy-mode without --config is what runs; a ConfigMap nobody mounts says nothing", async (t) => {
  const kubeadm = ds("kube-proxy-daemonset.kubeadm.json");
  const f = facts(
    {
      kubeProxyDaemonSet: { ...kubeadm, proxyModeFlag: "iptables", configFlag: null, configMount: null },
      kubeProxyConfigMap: toKubeProxyConfigMap(fixture("kube-proxy-configmap.kubeadm-ipvs.json") as never),
    },
    null,
  );
  const src = configSource(f);
  t.equal(src.kind, "flags");
  t.equal(src.mode, "iptables");
  t.notMatch(src.where, /override the --config/, "no --config to override");
  const d = clusterChecks(f, []).find((x) => x.id === "cluster-config-sources-disagree");
  t.match(d?.title, /--proxy-mode=iptables is what runs/);
});
