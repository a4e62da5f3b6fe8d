import { loadYaml } from "@kubernetes/client-node";
import type { KubeProxyConfigFile } from "../report/cluster-facts.js";

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

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
export function parseKubeProxyConfig(text: string): ParseResult<KubeProxyConfigFile> {
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
    },
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

// One kernel/version module for both programs: the agent's.
export {
  kernelMajorMinor as parseKernelRelease,
  kubeMajorMinor as parseKubeVersion,
  releaseCanRunNftables as nftablesCapable,
} from "../../agent/contract.js";
