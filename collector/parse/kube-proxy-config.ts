import { loadYaml } from "@kubernetes/client-node";
import type { ConfigMount, KubeProxyConfigFile, ModeKeys } from "../report/cluster-facts.js";

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Feature gates as written in a config file: `{Name: true}`; anything else is dropped, not guessed. */
function gates(v: unknown): Record<string, boolean> {
  if (!isRecord(v)) return {};
  return Object.fromEntries(
    Object.entries(v).flatMap(([k, x]) => (typeof x === "boolean" ? [[k, x] as const] : [])),
  );
}

/**
 * The KubeProxyConfiguration of a kube-proxy ConfigMap, without defaulting: what matters here is what
 * the operator wrote, and "nothing written" (an unpinned mode) is itself the finding.
 */
export function parseKubeProxyConfig(text: string): Result<KubeProxyConfigFile> {
  let doc: unknown;
  try {
    doc = loadYaml<unknown>(text);
  } catch (e) {
    return { ok: false, error: `not YAML: ${(e as Error).message.split("\n")[0]}` };
  }
  if (!isRecord(doc)) return { ok: false, error: "not a YAML mapping" };
  if (doc.kind !== undefined && doc.kind !== "KubeProxyConfiguration")
    return {
      ok: false,
      // A bounded excerpt: a 1 MiB kind, or a self-referencing YAML alias JSON.stringify throws on.
      error: `kind is ${typeof doc.kind === "string" ? JSON.stringify(doc.kind.slice(0, 80)) : `of type ${typeof doc.kind}`}, not KubeProxyConfiguration`,
    };
  // A mapping or list where kube-proxy expects a string is an error, not text: String() of a YAML
  // mapping with a `toString:` key throws, and "[object Object]" would pass for a mode.
  if (typeof doc.mode === "object" && doc.mode !== null)
    return { ok: false, error: "mode is a mapping or list, not a string" };
  const mode = doc.mode === undefined || doc.mode === null ? null : String(doc.mode);
  const ipvs = isRecord(doc.ipvs) ? doc.ipvs : null;
  const conntrack = isRecord(doc.conntrack) ? doc.conntrack : null;
  const npa = doc.nodePortAddresses;
  if (Array.isArray(npa) && npa.some((x) => typeof x === "object" && x !== null))
    return { ok: false, error: "nodePortAddresses holds a mapping or list, not strings" };
  return {
    ok: true,
    value: {
      mode,
      ipvs: ipvs
        ? {
            scheduler: typeof ipvs.scheduler === "string" ? ipvs.scheduler : null,
            strictARP: typeof ipvs.strictARP === "boolean" ? ipvs.strictARP : null,
            keys: Object.keys(ipvs).filter((k) => !isEmpty(ipvs[k])),
          }
        : null,
      featureGates: gates(doc.featureGates),
      nodePortAddresses: Array.isArray(npa) ? npa.map(String) : null,
      conntrackTcpBeLiberal:
        conntrack && typeof conntrack.tcpBeLiberal === "boolean" ? conntrack.tcpBeLiberal : null,
      modeKeys: {
        iptables: modeKeys(doc.iptables),
        ipvs: modeKeys(doc.ipvs),
        nftables: modeKeys(doc.nftables),
      },
    },
  };
}

/** A mode block's shared keys as written; a zero value (kubeadm renders every key) is not written. */
function modeKeys(block: unknown): ModeKeys {
  const b = isRecord(block) ? block : {};
  const duration = (v: unknown) => (typeof v === "string" && !isEmpty(v) ? v : null);
  return {
    masqueradeAll: typeof b.masqueradeAll === "boolean" ? b.masqueradeAll : null,
    masqueradeBit:
      typeof b.masqueradeBit === "number" && Number.isInteger(b.masqueradeBit) ? b.masqueradeBit : null,
    syncPeriod: duration(b.syncPeriod),
    minSyncPeriod: duration(b.minSyncPeriod),
  };
}

// kubeadm writes every ipvs key with its zero value; a block of zero values is not "left behind".
function isEmpty(v: unknown): boolean {
  return (
    v === null ||
    v === undefined ||
    v === "" ||
    v === "0s" ||
    v === false ||
    v === 0 ||
    (Array.isArray(v) && v.length === 0) ||
    (isRecord(v) && Object.keys(v).length === 0)
  );
}

/** `--name=value` or `--name value` from a container's command + args; the last occurrence wins, as in pflag. */
export function flagValue(argv: readonly string[], name: string): string | null {
  let found: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === `--${name}` || a === `-${name}`) {
      const next = argv[i + 1];
      if (next !== undefined && !next.startsWith("-")) found = next;
    } else if (a.startsWith(`--${name}=`) || a.startsWith(`-${name}=`)) {
      found = a.slice(a.indexOf("=") + 1);
    }
  }
  return found;
}

interface KeyToPath {
  key?: string;
  path?: string;
}
interface ConfigMapSource {
  name?: string;
  items?: (KeyToPath | null)[];
}
/** The parts of a pod's volumeMounts and volumes (core/v1 VolumeMount, Volume) that say what backs a path. */
interface MountLike {
  name?: string;
  mountPath?: string;
  subPath?: string;
}
interface VolumeLike {
  name?: string;
  configMap?: ConfigMapSource;
  projected?: { sources?: ({ configMap?: ConfigMapSource } | null)[] };
}

const trimSlash = (p: string) => (p.length > 1 ? p.replace(/\/+$/, "") : p);

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** The data key of a ConfigMap volume that appears at `rel` below its mount: `items` remap keys to paths. */
function keyAt(src: ConfigMapSource, rel: string): string | null {
  if (Array.isArray(src.items) && src.items.length > 0)
    return str(src.items.find((i) => str(i?.path) === rel)?.key);
  // Without items every key is a file directly under the mount; a key cannot hold a "/".
  return rel.includes("/") ? null : rel;
}

/**
 * Which volume backs kube-proxy's --config file, and for a ConfigMap volume which ConfigMap and key:
 * the mount whose path is the file itself (subPath) or the longest directory above it. EKS mounts
 * ConfigMap kube-proxy-config at /var/lib/kube-proxy-config/ and passes --config=…/config (key
 * `config`); kubeadm mounts kube-proxy at /var/lib/kube-proxy (key config.conf).
 */
export function configMountOf(
  configPath: string,
  mounts: readonly (MountLike | null)[],
  volumes: readonly (VolumeLike | null)[],
): ConfigMount {
  const path = trimSlash(configPath);
  // A subPath mount of the file itself wins; otherwise the deepest directory mounted above it.
  let best: { mount: MountLike; rel: string; rank: number } | null = null;
  // What the API supplies is checked, not trusted: a mountPath that is no string is no mount.
  for (const m of Array.isArray(mounts) ? mounts : []) {
    const mountPath = str(m?.mountPath);
    if (!m || !mountPath || !str(m.name)) continue;
    const at = trimSlash(mountPath);
    const under = at === "/" ? path.startsWith("/") && path !== "/" : path.startsWith(`${at}/`);
    const subPath = str(m.subPath);
    const found = subPath
      ? at === path
        ? { rel: subPath, rank: Infinity }
        : null
      : under
        ? { rel: path.slice(at === "/" ? 1 : at.length + 1), rank: at.length }
        : null;
    if (found && (!best || found.rank > best.rank)) best = { mount: m, ...found };
  }
  if (!best) return { kind: "unmounted", path: configPath };
  const volume = best.mount.name!;
  const v = (Array.isArray(volumes) ? volumes : []).find((x) => x?.name === volume);
  const cm = v?.configMap;
  if (cm && str(cm.name)) {
    const key = keyAt(cm, best.rel);
    if (key) return { kind: "configmap", path: configPath, volume, configMap: cm.name!, key };
    return {
      kind: "other-volume",
      path: configPath,
      volume,
      source: `configMap ${cm.name} (no key at ${best.rel})`,
    };
  }
  const sources = v?.projected?.sources;
  const projected = (Array.isArray(sources) ? sources : []).flatMap((s) =>
    s?.configMap && str(s.configMap.name) ? [s.configMap] : [],
  );
  // A projected volume merges several sources: only one ConfigMap among them says whose key it is.
  if (projected.length === 1) {
    const key = keyAt(projected[0]!, best.rel);
    if (key) return { kind: "configmap", path: configPath, volume, configMap: projected[0]!.name!, key };
  }
  const source =
    v && typeof v === "object" ? (Object.keys(v).find((k) => k !== "name") ?? "unknown") : "no such volume";
  return { kind: "other-volume", path: configPath, volume, source };
}

/** `--feature-gates=A=true,B=false` as kube-proxy's flag parser reads it. */
export function parseFeatureGatesFlag(value: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const part of value.split(",")) {
    const [k, v] = part.split("=").map((s) => s.trim());
    if (!k || v === undefined) continue;
    if (/^true$/i.test(v)) out[k] = true;
    else if (/^false$/i.test(v)) out[k] = false;
  }
  return out;
}

import type { Result } from "../../common/result.js";
