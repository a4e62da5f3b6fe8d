import { readFileSync } from "node:fs";
import type { V1DaemonSet, V1Pod } from "@kubernetes/client-node";
import type { ClusterFacts } from "../../collector/report/cluster-facts.js";
import type { FleetReport, NodeObservation } from "../../collector/report/schema.js";
import { rollup, type RollupInput } from "../../collector/plan/rollup.js";
import { parseTargetVersion } from "../../collector/checks/target-version.js";
import {
  toKubeProxyConfigMap,
  toKubeProxyDaemonSet,
  toMirrorPod,
} from "../../collector/sources/kubernetes/index.js";
import { apiNode, apiService, cfg, facts, hostFileFacts, ok } from "./fleet.js";
import { reviewFleet } from "./review-fleet.js";

// Fleets that between them raise every cluster finding and reach every kind of kube-proxy config
// source, built from the shapes the collector's unit tests use (test/helpers/fleet.ts) and the recorded
// API objects in test/fixtures/kubernetes/. The fleet-report golden test renders each of them.

type Json = Record<string, unknown>;
const fixture = (name: string): Json =>
  JSON.parse(readFileSync(new URL(`../fixtures/kubernetes/${name}`, import.meta.url), "utf8")) as Json;
const ds = (name: string) => toKubeProxyDaemonSet(fixture(name) as V1DaemonSet);
const mirror = (name: string, node: string) =>
  toMirrorPod(JSON.parse(JSON.stringify(fixture(name)).replaceAll("NODE", node)) as V1Pod);
const v = (minor: number) => ({ gitVersion: `v1.${minor}.0`, major: 1, minor });

const svc = apiService;
const services = [
  svc("api", { sessionAffinity: "ClientIP" }),
  svc("web", {
    type: "NodePort",
    ports: [{ name: null, protocol: "TCP", port: 80, nodePort: 30080 }],
    externalTrafficPolicy: "Local",
  }),
];

function fleet(cluster: ClusterFacts | null, observations: NodeObservation[], target?: string): FleetReport {
  const input: RollupInput = {
    source: cluster ? "agents" : "static",
    collectorVersion: "0.1.0",
    generatedAt: new Date("2026-11-29T12:00:00Z"),
    cluster,
    observations,
    missingOutcome: "no-agent",
    targetVersion: target ? parseTargetVersion(target) : null,
  };
  return rollup(input);
}

function unpinnedKubeadm(): FleetReport {
  const f = facts(
    { kubeadm: true, services, nodes: [apiNode("a", "5.10.0-32-amd64"), apiNode("b"), apiNode("c")] },
    cfg({ mode: "" }),
  );
  f.kubeProxyDaemonSet!.maxUnavailable = "10%";
  return fleet(f, [ok("a", "iptables", "ready"), ok("b", "ipvs", "attention")], "1.40");
}

function ipvsBlockLeft(): FleetReport {
  const f = facts(
    { version: v(46), nodes: [apiNode("a")] },
    cfg({
      mode: "nftables",
      ipvs: { scheduler: "lc", strictARP: true, keys: ["scheduler", "strictARP"] },
      featureGates: { KubeProxyIPVS: true },
      // Switched without carrying the mark bit: nftables mode is back on bit 14.
      modeKeys: {
        iptables: { masqueradeAll: null, masqueradeBit: 13, syncPeriod: null, minSyncPeriod: null },
        ipvs: { masqueradeAll: null, masqueradeBit: null, syncPeriod: null, minSyncPeriod: null },
        nftables: { masqueradeAll: null, masqueradeBit: null, syncPeriod: null, minSyncPeriod: null },
      },
    }),
  );
  f.kubeProxyDaemonSet!.featureGatesFlag = { KubeProxyNFTablesLocalhostNodePorts: true };
  return fleet(f, [ok("a", "nftables", "ready")], "1.46");
}

function sourcesDisagree(): FleetReport {
  const f = facts({ version: v(43), nodes: [apiNode("a"), apiNode("b")] }, cfg({ mode: "ipvs" }));
  f.kubeProxyDaemonSet!.proxyModeFlag = "iptables";
  f.kubeProxyDaemonSet!.configFlag = null;
  f.kubeProxyDaemonSet!.configMapVolumes = ["kube-proxy-other"];
  return fleet(f, [ok("a", "ipvs", "attention"), ok("b", "iptables", "ready")], "1.43");
}

function ipvsConfigured(): FleetReport {
  const f = facts(
    { version: v(40), nodes: [apiNode("a"), apiNode("b")], services: [services[1]!] },
    cfg({
      mode: "ipvs",
      ipvs: { scheduler: "rr", strictARP: true, keys: ["scheduler", "strictARP"] },
      featureGates: { KubeProxyIPVS: false },
      nodePortAddresses: ["primary"],
      // masqueradeAll for the network plugin and tuned ipvs sync: nftables mode reads its own keys.
      modeKeys: {
        iptables: { masqueradeAll: true, masqueradeBit: null, syncPeriod: null, minSyncPeriod: null },
        ipvs: { masqueradeAll: null, masqueradeBit: null, syncPeriod: "1m0s", minSyncPeriod: "5s" },
        nftables: { masqueradeAll: null, masqueradeBit: null, syncPeriod: null, minSyncPeriod: null },
      },
    }),
  );
  return fleet(f, [ok("a", "ipvs", "attention")], "v1.39.2");
}

function unreadable(): FleetReport {
  const f = facts({ version: v(35), nodes: [apiNode("a")] }, null);
  f.kubeProxyConfigMap!.parseError = "not YAML: unexpected end of the stream";
  return fleet(f, [ok("a", "iptables", "ready")]);
}

const noKubeProxy = () =>
  fleet(facts({ kubeProxyDaemonSet: null, kubeProxyConfigMap: null, nodes: [apiNode("a")] }), [
    ok("a", "none", "clean"),
  ]);

function kopsStatic(): FleetReport {
  const f = facts({
    kubeProxyDaemonSet: null,
    kubeProxyConfigMap: null,
    nodes: [apiNode("a"), apiNode("b")],
    staticKubeProxy: {
      pods: [
        mirror("kube-proxy-mirror-pod.kops.template.json", "a"),
        mirror("kube-proxy-mirror-pod.kops.template.json", "b"),
      ],
      more: true,
    },
  });
  return fleet(f, [ok("a", "ipvs", "attention")]);
}

function talos(): FleetReport[] {
  const flags = facts({
    kubeProxyDaemonSet: ds("kube-proxy-daemonset.talos-flags.json"),
    kubeProxyConfigMap: null,
  });
  flags.nodes = [{ ...apiNode("a"), osImage: "Talos (v1.14.0)" }];
  const forbidden = facts({
    kubeProxyDaemonSet: ds("kube-proxy-daemonset.talos-config.json"),
    kubeProxyConfigMap: null,
    gaps: [{ what: "configmap kube-system/kube-proxy-config-abc123", reason: "HTTP 403: forbidden" }],
  });
  const read = facts({
    kubeProxyDaemonSet: ds("kube-proxy-daemonset.talos-config.json"),
    kubeProxyConfigMap: toKubeProxyConfigMap(
      fixture("kube-proxy-configmap.talos.json") as never,
      "config.conf",
    ),
  });
  return [
    fleet(flags, [ok("a", "iptables", "ready")]),
    fleet(forbidden, [ok("a", "nftables", "clean")]),
    fleet(read, []),
  ];
}

function hostFile(): FleetReport {
  return fleet(hostFileFacts(), [ok("a", "nftables", "clean")]);
}

function k3s(): FleetReport[] {
  const node = (n: string) => ({ ...apiNode(n), kubeletVersion: "v1.34.2+k3s1" });
  const f = facts({ kubeProxyDaemonSet: null, kubeProxyConfigMap: null, nodes: [node("a"), node("b")] });
  const guessed = { ...ok("b", "ipvs", "attention"), phaseInferred: true };
  return [fleet(f, [ok("a", "ipvs", "attention"), guessed]), fleet(f, [ok("a", "none", "clean")])];
}

function eksUnpinned(): FleetReport {
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
  return fleet(f, []);
}

const staticPodsUnread = () =>
  fleet(
    facts({
      kubeProxyDaemonSet: null,
      kubeProxyConfigMap: null,
      gaps: [{ what: "pods kube-system (kube-proxy static pods)", reason: "HTTP 403: forbidden" }],
    }),
    [ok("a", "iptables", "ready")],
  );

/** The config sources no fleet above reaches: defaults on the DaemonSet, static pods, no DaemonSet. */
function moreSources(): [string, FleetReport][] {
  const defaults = facts({}, cfg({ mode: "nftables" }));
  defaults.kubeProxyDaemonSet!.configMount = null;
  defaults.kubeProxyDaemonSet!.configFlag = null;
  const statics = (...templates: string[]) =>
    facts({
      kubeProxyDaemonSet: null,
      kubeProxyConfigMap: null,
      staticKubeProxy: { pods: templates.map((x, i) => mirror(x, `n${i}`)), more: false },
    });
  const configMapOnly = facts({ kubeProxyDaemonSet: null }, cfg({ mode: "ipvs" }));
  const nothing = facts({ kubeProxyDaemonSet: null, kubeProxyConfigMap: null });
  return [
    ["daemonset-defaults", fleet(defaults, [ok("a", "iptables", "ready")])],
    ["rke2-static-pinned", fleet(statics("kube-proxy-mirror-pod.rke2.template.json"), [])],
    [
      "static-pods-disagree",
      fleet(
        statics("kube-proxy-mirror-pod.rke2.template.json", "kube-proxy-mirror-pod.kops.template.json"),
        [],
      ),
    ],
    ["configmap-only", fleet(configMapOnly, [ok("a", "ipvs", "attention")])],
    ["outside-api", fleet(nothing, [ok("a", "ipvs", "attention")])],
  ];
}

/** Every fleet, by the name its golden files carry. */
/** A kubeadm cluster in ipvs mode whose Calico breaks beside nftables kube-proxy; and one whose DaemonSets were not read. */
function networkPlugins(): [string, FleetReport][] {
  const ds = (namespace: string, name: string, images: string[]) => ({
    namespace,
    name,
    images,
    runServiceProxy: null,
  });
  const breaks = facts(
    {
      version: v(34),
      nodes: [apiNode("a")],
      daemonSets: {
        items: [
          ds("kube-system", "kube-proxy", ["registry.k8s.io/kube-proxy:v1.34.4"]),
          ds("calico-system", "calico-node", [
            "docker.io/calico/node:v3.27.0",
            "docker.io/calico/pod2daemon-flexvol:v3.27.0",
            "docker.io/calico/cni:v3.27.0",
          ]),
          ds("kube-flannel", "kube-flannel-ds", ["ghcr.io/flannel-io/flannel:v0.24.2"]),
        ],
        more: false,
      },
    },
    cfg({ mode: "ipvs" }),
  );
  const unread = facts(
    {
      version: v(34),
      nodes: [apiNode("a")],
      daemonSets: null,
      gaps: [
        {
          what: "daemonsets (all namespaces)",
          reason:
            'HTTP 403: daemonsets.apps is forbidden: User "system:serviceaccount:proxyscope:proxyscope-collector" cannot list resource "daemonsets" in API group "apps" at the cluster scope',
        },
      ],
    },
    cfg({ mode: "ipvs" }),
  );
  return [
    ["network-plugin-breaks", fleet(breaks, [ok("a", "ipvs", "attention")])],
    ["network-plugin-unread", fleet(unread, [ok("a", "ipvs", "attention")])],
  ];
}

export function goldenFleets(): [string, FleetReport][] {
  const [talosFlags, talosForbidden, talosRead] = talos();
  const [k3sAnswered, k3sDisabled] = k3s();
  return [
    ["review", reviewFleet()],
    ["review-history", reviewFleet({ history: true })],
    ["unpinned-kubeadm", unpinnedKubeadm()],
    ["ipvs-block-left", ipvsBlockLeft()],
    ["sources-disagree", sourcesDisagree()],
    ["ipvs-configured", ipvsConfigured()],
    ["config-unreadable", unreadable()],
    ["no-kube-proxy", noKubeProxy()],
    ["kops-static-pods", kopsStatic()],
    ["talos-flags", talosFlags!],
    ["talos-forbidden", talosForbidden!],
    ["talos-read", talosRead!],
    ["host-file", hostFile()],
    ["k3s-answered", k3sAnswered!],
    ["k3s-disabled", k3sDisabled!],
    ["eks-unpinned", eksUnpinned()],
    ["static-pods-unread", staticPodsUnread()],
    ["no-api", fleet(null, [ok("a", "ipvs", "attention")], "1.40")],
    ...moreSources(),
    ...networkPlugins(),
  ];
}
