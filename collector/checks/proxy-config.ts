import type { ClusterFacts } from "../report/cluster-facts.js";
import { configSource, kubeProxyUnread, sourceRemedy, type ObservedPhase } from "./config-source.js";
import type { CheckFinding } from "./references.js";

export { kubeProxyUnread, type ObservedPhase };

/**
 * The mode the cluster is configured for where kube-proxy really reads it (flags, the ConfigMap its
 * --config mounts, its static pods); null when that names none, or was not read.
 */
export function configuredMode(facts: ClusterFacts): string | null {
  return configSource(facts).mode;
}

/** Gates from the ConfigMap, overridden by the DaemonSet's --feature-gates (flags are read last). */
export function effectiveGates(facts: ClusterFacts): Record<string, boolean> {
  return {
    ...(facts.kubeProxyConfigMap?.config?.featureGates ?? {}),
    ...(facts.kubeProxyDaemonSet?.featureGatesFlag ?? {}),
  };
}

export function noKubeProxy(facts: ClusterFacts, observed: readonly ObservedPhase[] = []): CheckFinding[] {
  if (configSource(facts, observed).kind !== "none") return [];
  return [
    {
      id: "cluster-no-kube-proxy",
      severity: "info",
      stage: "any",
      blocksMigration: false,
      title:
        "No kube-proxy DaemonSet, ConfigMap or static pod in kube-system: the CNI may implement Services itself",
      evidence: { daemonSet: null, configMap: null },
      remedy:
        "If a CNI (Cilium, Calico eBPF) replaces kube-proxy, none of this deprecation applies; the node reports say which nodes still run a proxy",
    },
  ];
}

/** Only a source that was read and names no mode is "not pinned": unread or elsewhere is not empty. */
export function modeNotPinned(facts: ClusterFacts, observed: readonly ObservedPhase[] = []): CheckFinding[] {
  const src = configSource(facts, observed);
  if (src.pin !== "not-pinned") return [];
  const cfg = facts.kubeProxyConfigMap?.config;
  return [
    {
      id: "cluster-proxy-mode-not-pinned",
      severity: "warning",
      stage: "any",
      blocksMigration: false,
      title:
        "kube-proxy's mode is not pinned: it follows upstream's default, which a future release changes from iptables to nftables",
      evidence: {
        where: src.where,
        configMapMode: src.kind === "configmap" && cfg ? (cfg.mode ?? "(absent)") : null,
        proxyModeFlag: facts.kubeProxyDaemonSet?.proxyModeFlag ?? null,
        distribution: src.distribution,
      },
      remedy: `Pin it today (nftables, or the mode you mean to stay on): ${sourceRemedy(src)}`,
    },
  ];
}

export function ipvsConfigured(facts: ClusterFacts): CheckFinding[] {
  const mode = configuredMode(facts);
  if (mode !== "ipvs") return [];
  const cfg = facts.kubeProxyConfigMap?.config;
  return [
    {
      id: "cluster-ipvs-mode-configured",
      severity: "warning",
      stage: "before",
      blocksMigration: false,
      title: "kube-proxy is configured for the deprecated ipvs mode",
      evidence: {
        mode,
        scheduler: cfg?.ipvs?.scheduler ?? null,
        strictARP: cfg?.ipvs?.strictARP ?? null,
      },
      remedy:
        "Plan the move to nftables mode (or iptables on nodes whose kernel is older than 5.13): pin, check kernels, measure, canary, then pools",
    },
  ];
}

/** The ipvs block or strictARP still in the config once the mode is not ipvs: dead config that misleads. */
export function ipvsBlockLeft(facts: ClusterFacts): CheckFinding[] {
  const mode = configuredMode(facts);
  // Only the ConfigMap kube-proxy reads: another one's ipvs block is not kube-proxy's config.
  if (configSource(facts).kind === "file") return [];
  const ipvs = facts.kubeProxyConfigMap?.config?.ipvs;
  if (mode === "ipvs" || !ipvs || ipvs.keys.length === 0) return [];
  return [
    {
      id: "cluster-ipvs-config-left",
      severity: "info",
      stage: "after",
      blocksMigration: false,
      title: `The ipvs block is still in kube-proxy's config (${ipvs.keys.join(", ")}) although the mode is ${mode ?? "not pinned"}`,
      evidence: { keys: ipvs.keys, scheduler: ipvs.scheduler, strictARP: ipvs.strictARP },
      remedy: `Delete the whole ipvs: block (scheduler, strictARP, ...) from ConfigMap ${facts.kubeProxyConfigMap?.name ?? "kube-proxy"} (key ${facts.kubeProxyConfigMap?.key ?? "config.conf"}), and from kubeadm's cluster configuration if kubeadm manages it`,
    },
  ];
}

export function featureGates(facts: ClusterFacts): CheckFinding[] {
  const gates = effectiveGates(facts);
  const out: CheckFinding[] = [];
  if ("KubeProxyIPVS" in gates)
    out.push({
      id: "cluster-gate-kube-proxy-ipvs",
      severity: "warning",
      stage: "before",
      blocksMigration: false,
      title: `KubeProxyIPVS is set to ${gates.KubeProxyIPVS}: ${gates.KubeProxyIPVS ? "an override that buys three releases and stops working in 1.43" : "ipvs mode is switched off"}`,
      evidence: { KubeProxyIPVS: gates.KubeProxyIPVS ?? null },
      remedy: "Treat the gate as a deadline, not a plan: migrate, then remove it from featureGates",
    });
  if (gates.KubeProxyNFTablesLocalhostNodePorts === true) {
    const npa = facts.kubeProxyConfigMap?.config?.nodePortAddresses ?? [];
    if (!npa.includes("localhost"))
      out.push({
        id: "cluster-localhost-nodeports-half-configured",
        severity: "warning",
        stage: "after",
        blocksMigration: false,
        title:
          "KubeProxyNFTablesLocalhostNodePorts is on but nodePortAddresses does not include localhost: both halves are needed",
        evidence: { nodePortAddresses: npa },
        remedy: 'Set nodePortAddresses: ["primary", "localhost"] alongside the gate (1.37+)',
      });
  }
  return out;
}

/** ConfigMap vs DaemonSet flags vs what nodes really run (a config changed but pods not restarted). */
export function configDisagreement(facts: ClusterFacts, observed: readonly ObservedPhase[]): CheckFinding[] {
  const out: CheckFinding[] = [];
  const ds = facts.kubeProxyDaemonSet;
  const cm = facts.kubeProxyConfigMap;
  const cmMode = cm?.config?.mode?.trim() || null;
  if (ds?.proxyModeFlag && cmMode && ds.proxyModeFlag !== cmMode)
    out.push({
      id: "cluster-config-sources-disagree",
      severity: "error",
      stage: "any",
      blocksMigration: false,
      title: `The DaemonSet says --proxy-mode=${ds.proxyModeFlag} but the ConfigMap says mode: ${cmMode}`,
      evidence: { proxyModeFlag: ds.proxyModeFlag, configMapMode: cmMode, configFlag: ds.configFlag },
      remedy: "Keep one source of truth: drop --proxy-mode from the DaemonSet and pin mode: in the ConfigMap",
    });
  if (ds && cm && ds.configFlag === null)
    out.push({
      id: "cluster-configmap-not-used",
      severity: "warning",
      stage: "any",
      blocksMigration: false,
      title: "The kube-proxy DaemonSet passes no --config: the ConfigMap is not what kube-proxy reads",
      evidence: { argv: ds.argv, configMap: cm.name },
      remedy: "Edit the flags of the DaemonSet (or your installer's values), not the ConfigMap",
    });
  if (ds && cm && ds.configMapVolumes.length > 0 && !ds.configMapVolumes.includes(cm.name))
    out.push({
      id: "cluster-configmap-not-mounted",
      severity: "warning",
      stage: "any",
      blocksMigration: false,
      title: `The DaemonSet mounts ${ds.configMapVolumes.join(", ")}, not the ConfigMap ${cm.name} we read`,
      evidence: { mounted: ds.configMapVolumes, read: cm.name },
      remedy: "Find which ConfigMap feeds --config and change that one",
    });
  // The default when a source read names no mode is iptables (through 1.37, per the guide); an unread
  // or invisible source expects nothing.
  const src = configSource(facts, observed);
  const expected = src.mode ?? (src.pin === "not-pinned" ? "iptables" : null);
  if (ds && expected !== null && ["ipvs", "iptables", "nftables"].includes(expected)) {
    const off = observed.filter(
      (o) => ["ipvs", "iptables", "nftables"].includes(o.phase) && o.phase !== expected,
    );
    if (off.length > 0)
      out.push({
        id: "cluster-nodes-disagree-with-config",
        severity: "warning",
        stage: "any",
        blocksMigration: false,
        title: `${off.length} node(s) run a mode other than the configured ${expected}: config changed but pods not restarted, or a canary in progress`,
        evidence: { configured: expected, nodes: off.map((o) => `${o.node}=${o.phase}`) },
        remedy:
          "If this is not a canary in progress, restart kube-proxy on those nodes one at a time (kubectl -n kube-system delete pod --field-selector spec.nodeName=NODE -l k8s-app=kube-proxy)",
      });
  }
  if (cm && cm.config === null)
    out.push({
      id: "cluster-kube-proxy-config-unreadable",
      severity: "warning",
      stage: "any",
      blocksMigration: false,
      title: `The kube-proxy ConfigMap could not be read as a KubeProxyConfiguration: ${cm.parseError ?? "no config key"}`,
      evidence: { configMap: cm.name, key: cm.key, error: cm.parseError },
      remedy: `Check the ConfigMap by hand: kubectl -n kube-system get configmap ${cm.name} -o yaml`,
    });
  return out;
}

export function kubeadmCaveat(facts: ClusterFacts): CheckFinding[] {
  if (!facts.kubeadm || !facts.kubeProxyConfigMap) return [];
  return [
    {
      id: "cluster-kubeadm-reverts-configmap",
      severity: "info",
      stage: "any",
      blocksMigration: false,
      title:
        "kubeadm manages this cluster: a kubectl edit of the kube-proxy ConfigMap is reverted by the next `kubeadm upgrade`",
      evidence: { kubeadmConfig: "kube-system/kubeadm-config" },
      remedy:
        "Make every kube-proxy change in kubeadm's configuration too (the KubeProxyConfiguration passed to kubeadm), not only in the ConfigMap",
    },
  ];
}

/** A rolling update that restarts many kube-proxy pods at once is a fleet-wide change of data plane. */
export function rolloutNotCanarySafe(facts: ClusterFacts): CheckFinding[] {
  const ds = facts.kubeProxyDaemonSet;
  if (!ds || ds.updateStrategy !== "RollingUpdate") return [];
  const mu = ds.maxUnavailable ?? 1;
  if (mu === 1 || mu === "1") return [];
  return [
    {
      id: "cluster-kube-proxy-rollout-wide",
      severity: "warning",
      stage: "before",
      blocksMigration: false,
      title: `kube-proxy's DaemonSet rolls with maxUnavailable ${mu}: a ConfigMap change restarts many nodes at once`,
      evidence: { updateStrategy: ds.updateStrategy, maxUnavailable: mu },
      remedy:
        'Before the switch: kubectl -n kube-system patch ds kube-proxy -p \'{"spec":{"updateStrategy":{"rollingUpdate":{"maxUnavailable":1}}}}\' (or OnDelete), then restart one node\'s pod by hand',
    },
  ];
}
