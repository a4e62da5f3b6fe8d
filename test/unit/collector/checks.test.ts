import t from "tap";
import { clusterChecks } from "../../../collector/rules/index.js";
import type { ClusterFindingId } from "../../../collector/rules/catalogue.js";
import { deprecationStage } from "../../../collector/checks/timeline.js";
import {
  flagValue,
  parseFeatureGatesFlag,
  parseKubeProxyConfig,
} from "../../../collector/parse/kube-proxy-config.js";
import type { ClusterFacts } from "../../../collector/report/cluster-facts.js";
import { apiService, cfg, facts } from "../../helpers/fleet.js";

// Typed ids: a misspelt id in an assertion fails the typecheck instead of passing as "not raised".
const ids = (f: ClusterFacts, observed: Parameters<typeof clusterChecks>[1] = []): ClusterFindingId[] =>
  clusterChecks(f, observed).map((x) => x.id);

t.test("an empty mode is a finding for every cluster, ipvs or not", async (t) => {
  t.ok(ids(facts()).includes("cluster-proxy-mode-not-pinned"));
  t.ok(ids(facts({}, cfg({ mode: null }))).includes("cluster-proxy-mode-not-pinned"), "mode key absent");
  t.notOk(ids(facts({}, cfg({ mode: "nftables" }))).includes("cluster-proxy-mode-not-pinned"));
  const flagged = facts({}, cfg({ mode: "" }));
  flagged.kubeProxyDaemonSet!.proxyModeFlag = "iptables";
  // Beside --config kube-proxy ignores --proxy-mode (cmd/kube-proxy/app/options.go Complete, v1.34.4).
  t.ok(ids(flagged).includes("cluster-proxy-mode-not-pinned"), "--proxy-mode beside --config pins nothing");
  flagged.kubeProxyDaemonSet!.configFlag = null;
  flagged.kubeProxyDaemonSet!.configMount = null;
  t.notOk(ids(flagged).includes("cluster-proxy-mode-not-pinned"), "--proxy-mode without --config pins it");
  t.notOk(
    ids(facts({ kubeProxyConfigMap: null, kubeProxyDaemonSet: null })).includes(
      "cluster-proxy-mode-not-pinned",
    ),
  );
  t.ok(ids(facts({ kubeProxyConfigMap: null, kubeProxyDaemonSet: null })).includes("cluster-no-kube-proxy"));
});

t.test("the ipvs block and strictARP left behind once the mode moved", async (t) => {
  const left = facts(
    {},
    cfg({ mode: "nftables", ipvs: { scheduler: "lc", strictARP: true, keys: ["scheduler", "strictARP"] } }),
  );
  t.ok(ids(left).includes("cluster-ipvs-config-left"));
  const still = facts(
    {},
    cfg({ mode: "ipvs", ipvs: { scheduler: "lc", strictARP: true, keys: ["scheduler", "strictARP"] } }),
  );
  t.notOk(ids(still).includes("cluster-ipvs-config-left"), "not left behind while ipvs is the mode");
  t.ok(ids(still).includes("cluster-ipvs-mode-configured"));
  const zero = facts({}, cfg({ mode: "nftables", ipvs: { scheduler: null, strictARP: false, keys: [] } }));
  t.notOk(ids(zero).includes("cluster-ipvs-config-left"), "kubeadm's block of zero values is not config");
});

t.test("feature gates from the ConfigMap and the DaemonSet flag", async (t) => {
  t.ok(
    ids(facts({}, cfg({ mode: "ipvs", featureGates: { KubeProxyIPVS: true } }))).includes(
      "cluster-gate-kube-proxy-ipvs",
    ),
  );
  const f = facts({}, cfg({ mode: "nftables", featureGates: {} }));
  f.kubeProxyDaemonSet!.featureGatesFlag = { KubeProxyNFTablesLocalhostNodePorts: true };
  t.ok(ids(f).includes("cluster-localhost-nodeports-half-configured"));
  f.kubeProxyConfigMap!.config!.nodePortAddresses = ["primary", "localhost"];
  t.notOk(ids(f).includes("cluster-localhost-nodeports-half-configured"));
});

t.test("ConfigMap vs DaemonSet args vs what the nodes run", async (t) => {
  const f = facts({}, cfg({ mode: "ipvs" }));
  f.kubeProxyDaemonSet!.proxyModeFlag = "iptables";
  t.ok(ids(f).includes("cluster-config-sources-disagree"));
  const g = facts({}, cfg({ mode: "nftables" }));
  const found = clusterChecks(g, [
    { node: "a", phase: "nftables" },
    { node: "b", phase: "ipvs" },
    { node: "c", phase: "none" },
  ]).find((x) => x.id === "cluster-nodes-disagree-with-config");
  t.same(found?.evidence.nodes, ["b=ipvs"], "not restarted; a kube-proxy-free node is not a disagreement");
  const unpinned = clusterChecks(facts(), [{ node: "a", phase: "iptables" }]);
  t.notOk(
    unpinned.some((x) => x.id === "cluster-nodes-disagree-with-config"),
    "unpinned defaults to iptables",
  );
  const noConfig = facts({}, cfg({ mode: "ipvs" }));
  noConfig.kubeProxyDaemonSet!.configFlag = null;
  t.ok(ids(noConfig).includes("cluster-configmap-not-used"));
});

t.test("kubeadm caveat, wide rollouts, kernels from Node objects", async (t) => {
  t.ok(ids(facts({ kubeadm: true })).includes("cluster-kubeadm-reverts-configmap"));
  t.notOk(ids(facts()).includes("cluster-kubeadm-reverts-configmap"));
  const wide = facts();
  wide.kubeProxyDaemonSet!.maxUnavailable = "10%";
  t.ok(ids(wide).includes("cluster-kube-proxy-rollout-wide"));
  const n = (name: string, kernelVersion: string | null) => ({
    name,
    kubeletVersion: "v1.37.1",
    kernelVersion,
    osImage: "x",
    addresses: [],
    labels: {},
    ready: true,
    unschedulable: false,
    providerID: null,
  });
  const k = clusterChecks(
    facts({ nodes: [n("a", "5.12.19"), n("b", "5.13.0"), n("c", "6.1.0-26-amd64"), n("d", null)] }),
    [],
  );
  t.same(k.find((x) => x.id === "cluster-kernels-too-old-for-nftables")?.evidence.nodes, ["a 5.12.19 (x)"]);
});

t.test(
  "sessionAffinity: ClientIP says what changes, and which Services are reached at several addresses",
  async (t) => {
    const svc = apiService;
    const f = facts({
      services: [
        svc("api", { sessionAffinity: "ClientIP" }),
        svc("shop", {
          sessionAffinity: "ClientIP",
          type: "LoadBalancer",
          ports: [{ name: null, protocol: "TCP", port: 443, nodePort: 30443 }],
          loadBalancerIPs: ["203.0.113.7"],
        }),
      ],
    });
    const a = clusterChecks(f, []).find((x) => x.id === "cluster-services-session-affinity");
    t.match(a?.title, /one affinity per endpoint across all of a Service's IPs/);
    t.match(a?.title, /instead of one per IPVS virtual server/);
    t.notMatch(a?.title, /survives/);
    t.same(a?.evidence.reachedAtSeveralAddresses, ["prod/shop"]);
    t.equal(a?.evidence.count, 2);
  },
);

t.test("Services: sessionAffinity, NodePorts, externalTrafficPolicy", async (t) => {
  const svc = apiService;
  const f = facts({
    services: [
      svc("api", { sessionAffinity: "ClientIP" }),
      svc("web", {
        type: "NodePort",
        ports: [{ name: null, protocol: "TCP", port: 80, nodePort: 30080 }],
        externalTrafficPolicy: "Local",
      }),
    ],
  });
  const out = clusterChecks(f, []);
  t.same(out.find((x) => x.id === "cluster-services-session-affinity")?.evidence.services, ["prod/api"]);
  t.equal(
    out.find((x) => x.id === "cluster-nodeport-inventory")?.severity,
    "warning",
    "unrestricted NodePorts shrink",
  );
  // Both changes of the policy: in-cluster callers spread (ipvs syncEndpoint(…, ExternalPolicyLocal(), …)
  // vs nftables' "short-circuit pod traffic"), and external traffic to a node without an endpoint drops.
  const etp = out.find((x) => x.id === "cluster-services-etp-local");
  t.match(etp?.title, /in-cluster callers .* all endpoints/);
  t.match(etp?.title, /without a local endpoint/);
  t.match(etp?.remedy, /etp-local-in-cluster-callers/);
});

t.test("the deprecation timeline", async (t) => {
  const v = (minor: number) => ({ gitVersion: `v1.${minor}.0`, major: 1, minor });
  t.same(
    [34, 35, 36, 37, 39, 40, 42, 43, 45, 46, 50].map((m) => deprecationStage(v(m))),
    [
      "before-deprecation",
      "warning",
      "warning",
      "gated",
      "gated",
      "off-by-default",
      "off-by-default",
      "removed",
      "removed",
      "gate-removed",
      "gate-removed",
    ],
  );
  t.equal(deprecationStage(null), "unknown");
  const ipvs40 = clusterChecks(facts({ version: v(40) }, cfg({ mode: "ipvs" })), []);
  t.equal(ipvs40.find((x) => x.id === "cluster-deprecation-stage")?.severity, "error");
  const nft43 = clusterChecks(facts({ version: v(43) }, cfg({ mode: "nftables" })), []);
  t.equal(
    nft43.find((x) => x.id === "cluster-deprecation-stage")?.severity,
    "info",
    "nothing on ipvs: informational",
  );
});

t.test("parsing kube-proxy's config and flags", async (t) => {
  const p = parseKubeProxyConfig(
    'kind: KubeProxyConfiguration\nmode: ""\nipvs:\n  scheduler: rr\n  strictARP: true\n  syncPeriod: 0s\nfeatureGates:\n  KubeProxyIPVS: true\n',
  );
  t.ok(p.ok);
  if (p.ok) {
    t.equal(p.value.mode, "");
    t.same(p.value.ipvs?.keys, ["scheduler", "strictARP"]);
    t.same(p.value.featureGates, { KubeProxyIPVS: true });
  }
  t.match(parseKubeProxyConfig("mode: [unclosed"), { ok: false, error: /not YAML/ });
  t.match(parseKubeProxyConfig("kind: KubeletConfiguration\n"), { ok: false });
  t.match(parseKubeProxyConfig("- a list\n"), { ok: false, error: /mapping/ });
  t.equal(flagValue(["kp", "--proxy-mode=ipvs", "--proxy-mode", "nftables"], "proxy-mode"), "nftables");
  t.equal(flagValue(["kp", "--config=/x"], "proxy-mode"), null);
  t.same(parseFeatureGatesFlag("KubeProxyIPVS=false, Foo=TRUE,bad,=1"), { KubeProxyIPVS: false, Foo: true });
});

t.test("config kube-proxy does not read: its nodePortAddresses and ipvs block say nothing", async (t) => {
  // The gate on the DaemonSet's flag; the config itself not read (the API refused the ConfigMap).
  const unread = facts(
    { gaps: [{ what: "configmap kube-system/kube-proxy", reason: "HTTP 403 Forbidden" }] },
    null,
  );
  unread.kubeProxyDaemonSet!.featureGatesFlag = { KubeProxyNFTablesLocalhostNodePorts: true };
  t.notOk(
    ids(unread).includes("cluster-localhost-nodeports-half-configured"),
    "nodePortAddresses not read is not 'without localhost'",
  );
  // A DaemonSet on flags alone beside a leftover ConfigMap: that ConfigMap is not kube-proxy's config.
  const leftover = facts(
    {},
    cfg({ mode: "nftables", ipvs: { scheduler: "lc", strictARP: true, keys: ["scheduler", "strictARP"] } }),
  );
  leftover.kubeProxyDaemonSet = {
    ...leftover.kubeProxyDaemonSet!,
    argv: ["/usr/local/bin/kube-proxy", "--proxy-mode=nftables"],
    proxyModeFlag: "nftables",
    configFlag: null,
    configMount: null,
  };
  t.notOk(ids(leftover).includes("cluster-ipvs-config-left"), "not kube-proxy's config");
  // On flags alone, --nodeport-addresses is where localhost would be named.
  leftover.kubeProxyDaemonSet.featureGatesFlag = { KubeProxyNFTablesLocalhostNodePorts: true };
  t.ok(ids(leftover).includes("cluster-localhost-nodeports-half-configured"), "flags without it: raised");
  leftover.kubeProxyDaemonSet.argv.push("--nodeport-addresses=primary,localhost");
  t.notOk(ids(leftover).includes("cluster-localhost-nodeports-half-configured"), "the flag names it");
});
