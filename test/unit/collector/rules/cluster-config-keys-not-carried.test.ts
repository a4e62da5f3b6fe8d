// Flipping only `mode:` to nftables drops the mode-specific keys kube-proxy read until then: nftables mode
// reads masqueradeAll, masqueradeBit and the sync periods from its own `nftables:` block (kubernetes
// v1.34.4 pkg/proxy/apis/config/v1alpha1/conversion.go, cmd/kube-proxy/app/server_linux.go). What a
// careful SRE expects, per configuration as kubeadm, EKS and hand-written configs carry them:
// - kubeadm's rendered defaults (masqueradeAll false, masqueradeBit 14, sync periods 30s / 0s): nothing
//   to carry, no finding;
// - `iptables.masqueradeAll: true` (some CNIs need it) with no `nftables.masqueradeAll`: a warning naming
//   the key to add, before the switch and after it (then the masquerading is already lost);
// - a custom masquerade bit or tuned ipvs sync periods: the same, with the exact values;
// - the `nftables:` block already carries them: no finding; the config not read: no finding (another
//   finding says it was not read).
import t from "tap";
import { parseKubeProxyConfig } from "../../../../collector/parse/kube-proxy-config.js";
import { clusterChecks } from "../../../../collector/rules/index.js";
import { facts } from "../../../helpers/fleet.js";

function findingFor(yaml: string) {
  const p = parseKubeProxyConfig(yaml);
  if (!p.ok) throw new Error(p.error);
  return clusterChecks(facts({}, p.value), []).find((f) => f.id === "cluster-config-keys-not-carried");
}

const KUBEADM_DEFAULTS = `kind: KubeProxyConfiguration
mode: ipvs
iptables:
  masqueradeAll: false
  masqueradeBit: null
  minSyncPeriod: 0s
  syncPeriod: 0s
ipvs:
  scheduler: ""
  minSyncPeriod: 0s
  syncPeriod: 0s
nftables:
  masqueradeAll: false
  masqueradeBit: null
  minSyncPeriod: 0s
  syncPeriod: 0s
`;

t.test("kubeadm's rendered defaults carry nothing", async (t) => {
  t.equal(findingFor(KUBEADM_DEFAULTS), undefined);
});

// EKS's kube-proxy add-on config (test/fixtures/kubernetes/kube-proxy-config.eks-ipvs.json) has no
// `nftables:` block and says ipvs.minSyncPeriod: 0s, syncPeriod: 30s: ipvs mode's own defaults (v1.34.4
// v1alpha1/defaults.go gives IPVS.MinSyncPeriod none, so 0), nobody's tuning. Carrying "0s" over would
// change nothing either: nftables mode turns a zero minSyncPeriod into its 1s default.
t.test("a mode's own defaults written out are no tuning (EKS's add-on config)", async (t) => {
  t.equal(
    findingFor(`kind: KubeProxyConfiguration
mode: ipvs
iptables:
  masqueradeAll: false
  masqueradeBit: 14
  minSyncPeriod: 0s
  syncPeriod: 30s
ipvs:
  excludeCIDRs: null
  minSyncPeriod: 0s
  scheduler: "rr"
  syncPeriod: 30s
`),
    undefined,
  );
  t.equal(
    findingFor(`kind: KubeProxyConfiguration
mode: iptables
iptables:
  minSyncPeriod: 1s
  syncPeriod: 0s
`),
    undefined,
    "iptables mode's 1s default and a zero that means its 30s default",
  );
});

t.test("ipvs mode with masqueradeAll, a custom bit and tuned sync periods", async (t) => {
  const f = findingFor(`kind: KubeProxyConfiguration
mode: ipvs
iptables:
  masqueradeAll: true
  masqueradeBit: 13
ipvs:
  syncPeriod: 1m0s
  minSyncPeriod: 5s
`);
  t.ok(f, "raised");
  t.equal(f?.severity, "warning");
  t.equal(f?.stage, "before");
  t.same(f?.evidence.notCarried, [
    "iptables.masqueradeAll: true",
    "iptables.masqueradeBit: 13",
    "ipvs.syncPeriod: 1m0s",
    "ipvs.minSyncPeriod: 5s",
  ]);
  t.same(f?.evidence.add, [
    "nftables.masqueradeAll: true",
    "nftables.masqueradeBit: 13",
    "nftables.syncPeriod: 1m0s",
    "nftables.minSyncPeriod: 5s",
  ]);
  t.match(
    f?.remedy,
    /nftables: \{masqueradeAll: true, masqueradeBit: 13, syncPeriod: 1m0s, minSyncPeriod: 5s\}/,
  );
  t.match(f?.remedy, /masqueradeBit: 13/);
});

t.test("iptables mode: its own sync periods are what nftables mode drops", async (t) => {
  const f = findingFor(`mode: iptables
iptables:
  syncPeriod: 10s
`);
  t.same(f?.evidence.add, ["nftables.syncPeriod: 10s"]);
});

t.test("a value equal to nftables mode's default is no loss", async (t) => {
  t.equal(findingFor("mode: ipvs\nipvs:\n  syncPeriod: 30s\niptables:\n  masqueradeBit: 14\n"), undefined);
  t.equal(findingFor("mode: ipvs\nipvs:\n  minSyncPeriod: 1s\n"), undefined, "nftables' minSyncPeriod is 1s");
});

t.test("carried already: nothing", async (t) => {
  t.equal(
    findingFor(`mode: ipvs
iptables:
  masqueradeAll: true
ipvs:
  syncPeriod: 1m
nftables:
  masqueradeAll: true
  syncPeriod: 60s
`),
    undefined,
    "the same duration written another way is the same",
  );
});

t.test("after the switch, the loss is already live", async (t) => {
  const f = findingFor("mode: nftables\niptables:\n  masqueradeAll: true\n");
  t.equal(f?.stage, "after");
  t.match(f?.title, /masqueradeAll/);
});

t.test("a ConfigMap kube-proxy does not read says nothing about what it runs with", async (t) => {
  const p = parseKubeProxyConfig("mode: ipvs\niptables:\n  masqueradeAll: true\n");
  if (!p.ok) throw new Error(p.error);
  const raised = (f: ReturnType<typeof facts>) =>
    clusterChecks(f, []).some((x) => x.id === "cluster-config-keys-not-carried");
  t.ok(raised(facts({}, p.value)), "the ConfigMap its --config mounts: raised");
  // No --config: kube-proxy runs on its flags and defaults (cmd/kube-proxy/app/options.go: a config file
  // replaces the flags, and without one the ConfigMap is not read at all).
  const noConfig = facts({}, p.value);
  noConfig.kubeProxyDaemonSet = {
    ...noConfig.kubeProxyDaemonSet!,
    argv: ["/usr/local/bin/kube-proxy", "--proxy-mode=ipvs"],
    proxyModeFlag: "ipvs",
    configFlag: null,
    configMount: null,
  };
  t.notOk(raised(noConfig), "DaemonSet without --config");
  const other = facts({}, p.value);
  other.kubeProxyDaemonSet = {
    ...other.kubeProxyDaemonSet!,
    configMount: { ...other.kubeProxyDaemonSet!.configMount!, configMap: "kube-proxy-config" } as never,
  };
  t.notOk(raised(other), "its --config mounts another ConfigMap");
});

t.test("config not read: no finding", async (t) => {
  t.notOk(
    clusterChecks(facts({}, null), []).some((f) => f.id === "cluster-config-keys-not-carried"),
    "an unreadable or absent config is not a config without these keys",
  );
});

t.test("kube-proxy on flags, a ConfigMap it does not read: no finding", async (t) => {
  // Without --config kube-proxy reads its flags only (cmd/kube-proxy/app/options.go Complete), and
  // --masquerade-all sets the mode-independent Linux.MasqueradeAll: a leftover ConfigMap's iptables
  // block is not what it runs with, and adding an nftables block there would change nothing.
  const p = parseKubeProxyConfig("mode: ipvs\niptables:\n  masqueradeAll: true\n");
  if (!p.ok) throw new Error(p.error);
  const base = facts({}, p.value);
  const onFlags = facts(
    {
      kubeProxyDaemonSet: {
        ...base.kubeProxyDaemonSet!,
        argv: ["/usr/local/bin/kube-proxy", "--proxy-mode=ipvs", "--masquerade-all"],
        proxyModeFlag: "ipvs",
        configFlag: null,
        configMapVolumes: [],
        configMount: null,
      },
    },
    p.value,
  );
  t.notOk(
    clusterChecks(onFlags, []).some((f) => f.id === "cluster-config-keys-not-carried"),
    "the ConfigMap is not kube-proxy's config",
  );
  // The --config mount names another ConfigMap than the one read: that one is not kube-proxy's either.
  const other = facts(
    {
      kubeProxyDaemonSet: {
        ...base.kubeProxyDaemonSet!,
        configMount: { ...base.kubeProxyDaemonSet!.configMount!, configMap: "kube-proxy-custom" } as never,
      },
    },
    p.value,
  );
  t.notOk(
    clusterChecks(other, []).some((f) => f.id === "cluster-config-keys-not-carried"),
    "a ConfigMap other than the mounted one",
  );
  t.ok(
    clusterChecks(base, []).some((f) => f.id === "cluster-config-keys-not-carried"),
    "the mounted ConfigMap itself still raises it",
  );
});
