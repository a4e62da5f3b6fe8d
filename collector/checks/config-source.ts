import type {
  ClusterFacts,
  ConfigSource,
  KubeProxyConfigFile,
  KubeProxyDaemonSet,
  MirrorPod,
} from "../report/cluster-facts.js";
import { flagValue } from "../parse/kube-proxy-config.js";
import { detectDistribution, modeRemedy, type ConfigPlace, type Distribution } from "./distribution.js";

export interface ObservedPhase {
  node: string;
  phase: string;
  /** True when the agent guessed the phase from kernel state (kube-proxy did not answer /proxyMode). */
  inferred?: boolean | null;
}

const MODES = ["ipvs", "iptables", "nftables"];

/** The cluster facts configSource (and detectDistribution under it) reads: a rule using it needs them. */
export const CONFIG_SOURCE_NEEDS = [
  "kubeProxyDaemonSet",
  "kubeProxyConfigMap",
  "staticKubeProxy",
  "nodes",
  "kubeadm",
  "gaps",
] as const satisfies readonly (keyof ClusterFacts)[];

/** The gap a failed read of kube-proxy's config leaves, by what the config is (none: nothing unread). */
function unreadGap(facts: ClusterFacts, configMap: string | null): string | null {
  const g = facts.gaps.find(
    (x) =>
      /^daemonset [^/]+\/kube-proxy$/.test(x.what) ||
      (configMap !== null &&
        new RegExp(`^configmap [^/]+/${configMap.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`).test(x.what)) ||
      /^pods [^ ]+ \(kube-proxy static pods\)$/.test(x.what),
  );
  return g ? `${g.what}: ${g.reason}` : null;
}

/** kube-proxy's config could not be read (a gap on its DaemonSet, its ConfigMap or its static pods). */
export function kubeProxyUnread(facts: ClusterFacts): boolean {
  return unreadGap(facts, expectedConfigMap(facts)?.configMap ?? null) !== null;
}

/**
 * The config kube-proxy runs with, when the API shows it: the ConfigMap its DaemonSet's --config
 * mounts (or a lone one with no DaemonSet), read and parsed. Null: not read, or not kube-proxy's
 * (without --config kube-proxy reads only its flags, kubernetes cmd/kube-proxy/app/options.go Complete).
 */
export function configKubeProxyReads(facts: ClusterFacts): KubeProxyConfigFile | null {
  const cm = facts.kubeProxyConfigMap;
  if (!cm?.config) return null;
  const ds = facts.kubeProxyDaemonSet;
  const mounted = ds
    ? ds.configMount?.kind === "configmap" && ds.configMount.configMap === cm.name
    : configSource(facts).kind === "configmap";
  return mounted ? cm.config : null;
}

/** kube-proxy's DaemonSet passes no --config: it runs on its flags and their defaults alone. */
function onFlagsAlone(facts: ClusterFacts): KubeProxyDaemonSet | null {
  const ds = facts.kubeProxyDaemonSet;
  return ds && ds.configFlag === null && ds.configMount === null ? ds : null;
}

/**
 * The nodePortAddresses kube-proxy runs with: its config's, or on flags alone its --nodeport-addresses
 * ([] when unset: every address). Null: not read.
 */
export function nodePortAddressesInUse(facts: ClusterFacts): string[] | null {
  const config = configKubeProxyReads(facts);
  if (config) return config.nodePortAddresses ?? [];
  const argv = onFlagsAlone(facts)?.argv;
  if (!argv) return null;
  return (flagValue(argv, "nodeport-addresses") ?? "").split(",").filter((x) => x !== "");
}

/** The ConfigMap kube-proxy's --config is read from: followed through the mount, or the conventional one. */
function expectedConfigMap(facts: ClusterFacts): ConfigPlace | null {
  const ds = facts.kubeProxyDaemonSet;
  const m = ds?.configMount;
  if (m?.kind === "configmap") return { configMap: m.configMap, key: m.key };
  if (m) return null;
  return {
    configMap: facts.kubeProxyConfigMap?.name ?? "kube-proxy",
    key: facts.kubeProxyConfigMap?.key ?? null,
  };
}

type Base = Pick<
  ConfigSource,
  | "distribution"
  | "distributionEvidence"
  | "configMap"
  | "key"
  | "read"
  | "proxyModeFlags"
  | "mirrorPods"
  | "nodesAnswered"
>;

/** What every way of finding the source shares. */
interface Seen {
  facts: ClusterFacts;
  observed: readonly ObservedPhase[];
  distribution: Distribution;
  /** The fields a source that does not set them leaves empty; each source is spread over it. */
  base: Base;
  /** How many modes the nodes' /proxyMode answered (a guessed phase is not an answer). */
  answered: number;
  /** "; the nodes' /proxyMode answers ..." when any did: the truth when the config is not visible. */
  nodesSay: string;
}

/**
 * Where kube-proxy's mode comes from, and whether what was read pins it. Unread is never absent: a
 * config that could not be read, or that lives outside the API (a host file, k3s's process), is
 * "unknown" or the distribution's, never "not pinned".
 */
export function configSource(facts: ClusterFacts, observed: readonly ObservedPhase[] = []): ConfigSource {
  const d = detectDistribution(facts);
  const answered = new Map<string, number>();
  for (const o of observed)
    if (MODES.includes(o.phase) && o.inferred !== true)
      answered.set(o.phase, (answered.get(o.phase) ?? 0) + 1);
  const base: Base = {
    distribution: d.name,
    distributionEvidence: d.evidence,
    configMap: null,
    key: null,
    read: null,
    proxyModeFlags: [],
    mirrorPods: null,
    nodesAnswered: [...answered].map(([m, n]) => `${m}=${n}`).sort(),
  };
  const nodesSay =
    answered.size > 0 ? `; the nodes' /proxyMode answers ${base.nodesAnswered.join(", ")}` : "";
  const seen = { facts, observed, distribution: d.name, base, answered: answered.size, nodesSay };
  const ds = facts.kubeProxyDaemonSet;
  if (ds) return fromDaemonSet(seen, ds);
  const gap = unreadGap(facts, "kube-proxy");
  if (gap)
    return {
      ...base,
      kind: "unknown",
      pin: "unknown",
      mode: null,
      where: `kube-proxy's DaemonSet, ConfigMap or static pods, not read (${gap})${nodesSay}`,
    };
  const statics = facts.staticKubeProxy?.pods ?? [];
  return statics.length > 0 ? fromStaticPods(seen, statics) : withoutPods(seen);
}

/**
 * The ConfigMap (or file) the DaemonSet's --config mounts; without --config, its --proxy-mode or the
 * defaults. kube-proxy ignores its flags when --config is given: Complete() replaces the flag-built config
 * by the file's, keeping only the logging flags (kubernetes v1.34.4 cmd/kube-proxy/app/options.go).
 */
function fromDaemonSet({ facts, base, nodesSay }: Seen, ds: KubeProxyDaemonSet): ConfigSource {
  const cm = facts.kubeProxyConfigMap;
  const flag = ds.proxyModeFlag?.trim() || null;
  const m = ds.configMount;
  const withConfig = ds.configFlag !== null;
  if (flag && !withConfig)
    return {
      ...base,
      kind: "flags",
      pin: "pinned",
      mode: flag,
      where: `--proxy-mode=${flag} on DaemonSet kube-proxy (no --config)`,
      proxyModeFlags: [flag],
    };
  const ignored = flag ? ` (its --proxy-mode=${flag} is ignored beside --config)` : "";
  if (!m)
    return {
      ...base,
      kind: "flags",
      pin: "not-pinned",
      mode: null,
      where: "kube-proxy's defaults: DaemonSet kube-proxy passes neither --config nor --proxy-mode",
    };
  if (m.kind !== "configmap")
    return {
      ...base,
      kind: "file",
      pin: "unknown",
      mode: null,
      where: `the file --config=${m.path}, ${m.kind === "unmounted" ? "on no mounted volume (a file in the image)" : `from volume ${m.volume} (${m.source})`}: not readable through the API${ignored}${nodesSay}`,
    };
  const gap = unreadGap(facts, m.configMap);
  const here = `ConfigMap kube-system/${m.configMap}, key ${m.key} (DaemonSet kube-proxy's --config=${m.path})${ignored}`;
  const read = cm?.name === m.configMap && cm.config !== null;
  const mode = read ? cm!.config!.mode?.trim() || null : null;
  return {
    ...base,
    kind: "configmap",
    configMap: m.configMap,
    key: m.key,
    read,
    pin: read ? (mode ? "pinned" : "not-pinned") : "unknown",
    mode,
    where: read
      ? here
      : `${here}: ${gap ?? (cm?.name === m.configMap ? `unparsable (${cm.parseError})` : "absent: kube-proxy cannot start from it")}${nodesSay}`,
  };
}

/** Static pods, seen as their mirror pods: pinned only when every one names the same --proxy-mode. */
function fromStaticPods({ facts, base, nodesSay }: Seen, statics: readonly MirrorPod[]): ConfigSource {
  const flags = [...new Set(statics.map((p) => p.proxyModeFlag?.trim() || ""))];
  const named = flags.filter(Boolean).sort();
  const withConfig = statics.filter((p) => p.configFlag !== null).length;
  const sample = facts.staticKubeProxy?.more ? ` (the first ${statics.length}; more exist)` : "";
  const s = { ...base, kind: "static-pod" as const, proxyModeFlags: named, mirrorPods: statics.length };
  if (flags.length === 1 && named.length === 1)
    return {
      ...s,
      pin: "pinned",
      mode: named[0]!,
      where: `--proxy-mode=${named[0]} on the kube-proxy static pods, seen as ${statics.length} mirror pod(s)${sample}`,
    };
  if (named.length === 0 && withConfig === 0)
    return {
      ...s,
      pin: "not-pinned",
      mode: null,
      where: `kube-proxy's defaults: its static pods (${statics.length} mirror pod(s)${sample}) pass neither --proxy-mode nor --config`,
    };
  return {
    ...s,
    pin: "unknown",
    mode: null,
    where: `the kube-proxy static pods, which disagree or read a --config file on the node (--proxy-mode: ${flags.map((f) => f || "(none)").join(", ")}; ${withConfig} with --config)${nodesSay}`,
  };
}

/** No DaemonSet and no static pod: the distribution's own kube-proxy, a lone ConfigMap, or none. */
function withoutPods({ facts, observed, distribution: d, base, answered, nodesSay }: Seen): ConfigSource {
  const cm = facts.kubeProxyConfigMap;
  if ((d === "k3s" || d === "rke2") && answered === 0 && observed.some((o) => o.phase === "none"))
    return {
      ...base,
      kind: "none",
      pin: "unknown",
      mode: null,
      where: `${d} with its kube-proxy disabled (--disable-kube-proxy): the nodes run no kube-proxy`,
    };
  if (d === "k3s" || d === "rke2")
    return {
      ...base,
      kind: "distribution",
      pin: "distribution",
      mode: null,
      // k3s pkg/daemons/agent kubeProxyArgs: "proxy-mode": "iptables", overridden by --kube-proxy-arg.
      where: `${d === "k3s" ? "k3s's own flags (k3s runs kube-proxy inside its process and" : "RKE2's kube-proxy static pod, whose mirror pods were not found (RKE2"} passes --proxy-mode itself: iptables unless kube-proxy-arg overrides it), not visible in the API${nodesSay}`,
    };
  if (cm) {
    const mode = cm.config?.mode?.trim() || null;
    return {
      ...base,
      kind: "configmap",
      configMap: cm.name,
      key: cm.key,
      read: cm.config !== null,
      pin: cm.config === null ? "unknown" : mode ? "pinned" : "not-pinned",
      mode,
      where: `ConfigMap kube-system/${cm.name}${cm.key ? `, key ${cm.key}` : ""} (no kube-proxy DaemonSet to say it is what kube-proxy reads)`,
    };
  }
  if (answered > 0)
    return {
      ...base,
      kind: "unknown",
      pin: "unknown",
      mode: null,
      where: `somewhere outside the API: no kube-proxy DaemonSet, ConfigMap or static pod, yet kube-proxy answers on the nodes (a service on the host?)${nodesSay}`,
    };
  return {
    ...base,
    kind: "none",
    pin: "unknown",
    mode: null,
    where: "no kube-proxy DaemonSet, ConfigMap or static pod",
  };
}

/** The remedy that changes the mode where it really lives. */
export function sourceRemedy(src: ConfigSource, mode = "nftables"): string {
  const place = src.configMap ? { configMap: src.configMap, key: src.key } : null;
  return modeRemedy(src.distribution as Parameters<typeof modeRemedy>[0], mode, place);
}
